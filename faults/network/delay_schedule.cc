#include "faults/network/delay_schedule.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace chaosbench::faults {
namespace {

double uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

void check_probability(double p, const char* name) {
  if (!(p >= 0 && p <= 1)) throw std::invalid_argument(std::string("delay line: ") + name + " must be within 0..1");
}

}  // namespace

double CorrelatedUniform::next(std::mt19937_64& rng) {
  const double u = uniform01(rng);
  if (first_ || c_ == 0) {
    first_ = false;
    last_ = u;
    return u;
  }
  last_ = c_ * last_ + (1 - c_) * u;
  return last_;
}

double inverse_normal_cdf(double p) {
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                                 1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                                 6.680131188771972e+01,  -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                                 -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                                 3.754408661907416e+00};
  constexpr double kLow = 0.02425;
  p = std::clamp(p, 1e-300, 1 - 1e-16);  // the tails are unbounded; a sample stays finite
  auto tail = [&](double q) {
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  };
  if (p < kLow) return tail(std::sqrt(-2 * std::log(p)));
  if (p > 1 - kLow) return -tail(std::sqrt(-2 * std::log(1 - p)));
  const double q = p - 0.5, r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

DelaySchedule::DelaySchedule(const DelayLineSettings& settings)
    : settings_(settings),
      rng_(settings.seed),
      delay_random_(settings.delay_correlation),
      loss_random_(settings.loss_correlation) {
  if (settings.delay.count() < 0 || settings.jitter.count() < 0)
    throw std::invalid_argument("delay line: delay and jitter must not be negative");
  check_probability(settings.delay_correlation, "delay_correlation");
  check_probability(settings.loss, "loss");
  check_probability(settings.loss_correlation, "loss_correlation");
  check_probability(settings.corrupt, "corrupt");
  check_probability(settings.reorder, "reorder");
}

std::chrono::nanoseconds DelaySchedule::sample_delay() {
  if (settings_.jitter.count() == 0) return settings_.delay;
  const double u = delay_random_.next(rng_);
  const double jitter = static_cast<double>(settings_.jitter.count());
  // Uniform: delay +/- jitter (netem without a distribution table). Normal: delay + jitter
  // * z, z the normal quantile of the same correlated uniform, so correlation works alike.
  const double offset = settings_.distribution == DelayLineSettings::Distribution::kUniform
                            ? (2 * u - 1) * jitter
                            : inverse_normal_cdf(u) * jitter;
  const double total = static_cast<double>(settings_.delay.count()) + offset;
  return std::chrono::nanoseconds(total <= 0 ? 0 : static_cast<std::int64_t>(total));
}

PacketFate DelaySchedule::next(Clock::time_point arrival) {
  PacketFate fate;
  // Each probability draws only when asked for, so a zero setting costs nothing and
  // leaves the other draws of a seeded run unchanged.
  if (settings_.loss > 0 && loss_random_.next(rng_) < settings_.loss) {
    fate.kind = PacketFate::Kind::kDrop;
    return fate;
  }
  fate.corrupt = settings_.corrupt > 0 && uniform01(rng_) < settings_.corrupt;
  if (settings_.reorder > 0 && uniform01(rng_) < settings_.reorder) {
    fate.kind = PacketFate::Kind::kReorder;
    return fate;
  }
  fate.release = std::max(last_release_, arrival + sample_delay());
  last_release_ = fate.release;
  return fate;
}

bool DelaySchedule::flip_bit(unsigned char* packet, std::size_t length) {
  if (length < 1) return false;
  std::size_t header = 0;
  switch (packet[0] >> 4) {
    case 4:
      header = static_cast<std::size_t>(packet[0] & 0x0f) * 4;
      if (header < 20) return false;
      break;
    case 6: header = 40; break;
    default: return false;
  }
  if (length <= header) return false;
  const std::size_t bits = (length - header) * 8;
  const std::size_t bit = static_cast<std::size_t>(rng_() % bits);
  packet[header + bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
  return true;
}

}  // namespace chaosbench::faults

#include "bench/llm/load/length_sampler.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

#include <fmt/format.h>

namespace chaosbench::bench::llm {
namespace {

std::int64_t clamp_length(double x, std::int64_t max) {
  if (!(x >= 1)) return 1;  // also NaN
  if (x >= static_cast<double>(max)) return max;
  return std::clamp<std::int64_t>(std::llround(x), 1, max);
}

}  // namespace

std::string validate(const LengthSpec& s) {
  if (s.max < 1) return fmt::format("max must be at least 1 (got {})", s.max);
  switch (s.kind) {
    case LengthDistribution::kFixed:
      if (!(s.mean >= 1)) return fmt::format("a fixed length must be at least 1 (got {})", s.mean);
      return "";
    case LengthDistribution::kUniform:
      if (s.low < 1 || s.high < s.low) return fmt::format("uniform needs 1 <= low <= high (got {}..{})", s.low, s.high);
      return "";
    case LengthDistribution::kNormal:
    case LengthDistribution::kLognormal:
      if (!(s.mean > 0) || !std::isfinite(s.mean)) return fmt::format("mean must be positive (got {})", s.mean);
      if (!(s.stddev >= 0) || !std::isfinite(s.stddev)) return fmt::format("stddev must be >= 0 (got {})", s.stddev);
      return "";
  }
  return "unknown distribution";
}

LengthSampler::LengthSampler(const LengthSpec& spec, std::uint64_t seed) : spec_(spec), rng_(seed) {
  if (const std::string error = validate(spec); !error.empty()) throw std::invalid_argument(error);
  if (spec.kind == LengthDistribution::kLognormal) {
    // Lengths L = exp(N(mu, sigma²)) with E[L] = mean and SD[L] = stddev:
    // sigma² = ln(1 + stddev²/mean²), mu = ln(mean) − sigma²/2.
    const double ratio = spec.stddev / spec.mean;
    const double var = std::log1p(ratio * ratio);
    log_sigma_ = std::sqrt(var);
    log_mu_ = std::log(spec.mean) - var / 2;
  }
}

double LengthSampler::uniform01(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

double LengthSampler::standard_normal(std::mt19937_64& rng) {
  const double u1 = 1.0 - uniform01(rng);  // (0, 1], so the log is finite
  const double u2 = uniform01(rng);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

std::int64_t LengthSampler::next() {
  switch (spec_.kind) {
    case LengthDistribution::kFixed:
      return clamp_length(spec_.mean, spec_.max);
    case LengthDistribution::kUniform: {
      const auto span = static_cast<double>(spec_.high - spec_.low + 1);
      const auto offset = std::min(static_cast<std::int64_t>(uniform01(rng_) * span), spec_.high - spec_.low);
      return std::min(spec_.low + offset, spec_.max);
    }
    case LengthDistribution::kNormal:
      return clamp_length(spec_.mean + spec_.stddev * standard_normal(rng_), spec_.max);
    case LengthDistribution::kLognormal:
      return clamp_length(std::exp(log_mu_ + log_sigma_ * standard_normal(rng_)), spec_.max);
  }
  return 1;
}

}  // namespace chaosbench::bench::llm

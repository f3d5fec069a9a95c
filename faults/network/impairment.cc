#include "faults/network/impairment.h"

#include <algorithm>
#include <cmath>

namespace chaosbench::faults {
namespace {

std::uint32_t to_us(std::chrono::nanoseconds ns) {
  return static_cast<std::uint32_t>(std::min<std::int64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(ns).count(), std::numeric_limits<std::uint32_t>::max()));
}

}  // namespace

NetemSettings to_netem(const Impairment& imp) {
  NetemSettings s;
  s.delay_us = to_us(imp.delay);
  s.jitter_us = to_us(imp.jitter);
  s.delay_correlation = imp.delay_correlation;
  s.normal_distribution = imp.normal && imp.jitter.count() > 0;
  s.loss = imp.loss;
  s.loss_correlation = imp.loss_correlation;
  s.duplicate = imp.duplicate;
  s.corrupt = imp.corrupt;
  s.reorder = imp.reorder;
  s.reorder_correlation = imp.reorder_correlation;
  return s;
}

DelayLineSettings to_delay_line(const Impairment& imp, std::uint64_t seed) {
  DelayLineSettings s;
  s.delay = imp.delay;
  s.jitter = imp.jitter;
  s.distribution = imp.normal ? DelayLineSettings::Distribution::kNormal : DelayLineSettings::Distribution::kUniform;
  s.delay_correlation = imp.delay_correlation;
  s.loss = imp.loss;
  s.loss_correlation = imp.loss_correlation;
  s.corrupt = imp.corrupt;
  s.reorder = imp.reorder;
  s.seed = seed;
  return s;
}

std::string delay_line_cannot(const Impairment& imp) {
  if (imp.duplicate > 0)
    return "the NFQUEUE delay line cannot duplicate packets (a verdict can only pass, drop or change one); "
           "network.duplicate needs netem (the kernel's sch_netem)";
  return "";
}

}  // namespace chaosbench::faults

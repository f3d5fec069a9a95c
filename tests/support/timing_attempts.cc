// Timing attempts: see timing_attempts.h.
#include "timing_attempts.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

namespace chaosbench::test {

bool bracket(TimingMisses& misses, bool held, const std::string& what, double value, const std::string& expected) {
  if (!held) misses.push_back(fmt::format("{} {:.3f}, expected {}", what, value, expected));
  return held;
}

void within_timing_attempts(int attempts, const std::function<TimingMisses(int attempt)>& measure) {
  std::string missed;
  for (int attempt = 1; attempt <= attempts; ++attempt) {
    const TimingMisses misses = measure(attempt);
    if (misses.empty()) {
      if (!missed.empty())
        WARN(fmt::format("timing brackets held on attempt {} of {}; missed before:\n{}", attempt, attempts, missed));
      return;
    }
    for (const auto& m : misses) missed += fmt::format("  attempt {}: {}\n", attempt, m);
  }
  FAIL(fmt::format("timing brackets missed on all {} attempts:\n{}", attempts, missed));
}

}  // namespace chaosbench::test

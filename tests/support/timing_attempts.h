// Timing brackets in tests on a shared two-core machine (CI's): a measurement whose only
// misses are timing brackets is taken again, up to `attempts` times in all. A real bias
// misses on every attempt and fails with every attempt's figures; a miss that a later
// attempt does not repeat is printed as a Catch2 warning, never hidden.
// Checks that are not timing (counts, exit codes, failures) stay CHECK/REQUIRE inside
// `measure` and must hold on every attempt.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace chaosbench::test {

// What one attempt missed, each as "what: measured, expected bracket"; empty when it held.
using TimingMisses = std::vector<std::string>;

// Adds "`what` `value`, expected `expected`" to `misses` when !held; returns held.
bool bracket(TimingMisses& misses, bool held, const std::string& what, double value, const std::string& expected);

// Calls measure(1), measure(2)... until one returns no misses or `attempts` calls ran;
// FAILs with each attempt's misses when none held. Blocking; measure may REQUIRE.
void within_timing_attempts(int attempts, const std::function<TimingMisses(int attempt)>& measure);

}  // namespace chaosbench::test

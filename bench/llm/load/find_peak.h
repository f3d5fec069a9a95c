// Finds the highest request rate at which a server still attains its SLO often enough:
// the idea of MLPerf LoadGen's FindPeakPerformance mode, applied to goodput. Pure logic
// over a callback that runs one trial at a rate and returns its SLO attainment (%), so it
// is tested with a synthetic server model and driven by the LLM load generator for real.
//
// The search: one trial at `start_rate`; while trials pass, double the rate (while they
// fail, halve it) until a pass and a fail bracket the peak; then bisect the bracket until
// (lowest failing − highest passing) / highest passing <= `relative_precision`. The answer
// is the bracket itself, since a measured peak is only known to lie inside it.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace chaosbench::bench::llm {

struct FindPeakOptions {
  double start_rate = 1;             // requests per second, > 0
  double target_attainment = 99;     // %: a trial passes when its attainment >= this
  double relative_precision = 0.05;  // stop bisecting once the bracket is this narrow
  double min_rate = 1e-3;            // give up halving below this (nothing passes)
  double max_rate = 1e6;             // give up doubling above this (nothing fails)
  std::size_t max_trials = 40;       // trials are expensive; a hard stop
};

struct PeakTrial {
  double rate = 0;
  std::optional<double> attainment;  // absent: the trial finished no request
  bool passed = false;               // an absent attainment never passes
};

enum class PeakStop {
  kConverged,     // the bracket is within relative_precision
  kNothingFails,  // max_rate passed: the peak is above it
  kNothingPasses, // min_rate failed: the peak is below it
  kMaxTrials,     // stopped with the bracket as far as it got
  kStopped,       // the run was stopped (a signal) before the search ended: the bracket as far as it got
};

struct PeakResult {
  std::optional<double> highest_passing;  // the answer's lower end
  std::optional<double> lowest_failing;   // its upper end
  PeakStop stop = PeakStop::kConverged;
  std::vector<PeakTrial> trials;          // in the order they ran
};

std::string to_string(PeakStop stop);

// Runs trials through `trial(rate)` (which blocks for as long as the trial takes and may
// throw; the exception passes through). Throws std::invalid_argument for options that
// cannot work (a non-positive rate or precision, min_rate > max_rate, no trials).
PeakResult find_peak(const std::function<std::optional<double>(double rate)>& trial, const FindPeakOptions& options);

}  // namespace chaosbench::bench::llm

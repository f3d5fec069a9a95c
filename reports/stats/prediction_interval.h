// The history gate's prediction interval (history_gate.h, docs/history.md): where the next
// run's value should fall, given the last n runs of the same metric, if nothing changed.
// Student's t: mean ± t_{(1 + confidence) / 2, n - 1} · sd · √(1 + 1/n), the interval that
// covers a new independent draw from the same normal distribution with probability
// `confidence` (the √(1 + 1/n) adds the uncertainty of the mean to the draw's own spread).
// On a log scale the values' logarithms are used and the bounds are taken back with exp:
// run-to-run noise is multiplicative (3 % of a 1 ms latency and of a 100 ms one), so the
// interval is then symmetric in ratio, not in difference. Pure.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace chaosbench::reports {

struct PredictionInterval {
  std::size_t n = 0;        // history values used
  bool log_scale = false;   // computed on log values, bounds taken back with exp
  double mean = 0;          // of the values on the scale (the mean log when log_scale)
  double sd = 0;            // sample standard deviation on the scale (n - 1)
  double t_quantile = 0;    // t_{(1 + confidence) / 2, n - 1}
  double center = 0;        // the mean in the values' units (the geometric mean when log_scale)
  double low = 0, high = 0; // the bounds in the values' units
};

// Whether the log scale fits: every value and `current` finite and above zero.
bool log_scale_fits(const std::vector<double>& values, double current);

// nullopt for fewer than 2 values or a value that is not finite (or not above zero on
// the log scale). `confidence` in (0, 1), e.g. 1 - alpha.
std::optional<PredictionInterval> prediction_interval(const std::vector<double>& values, double confidence,
                                                      bool log_scale);

}  // namespace chaosbench::reports

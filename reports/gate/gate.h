// The baseline gate: this run against a baseline run, per metric, in a way that fails on
// real regressions and not on a noisy runner. For each metric record (name, labels,
// phase) present in both runs, the samples behind it come from the runs' series (the
// values whose time falls in the phase); the statistic compared is the median, and the
// p99 as well for latency-like metrics (unit time, better lower). A regression FAILs
// only when it is significant (two-sided Mann-Whitney U, p < alpha) AND the whole
// bootstrap confidence interval of the relative change lies beyond the tolerance in the
// worse direction; fewer than min_samples on a side gives WARN (never a silent pass);
// improvements never fail. Tolerance: default_tolerance, or the scenario's per-metric
// "tolerance" in its checks (the current run's resolved scenario).
// Repeated runs (`run --repeat N`: records with per-run values) are compared run by run
// instead: one figure per run and side, Welch's t test (gate_runs.h).
// Pure and deterministic (the bootstrap uses `seed`).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "reports/model/run_model.h"

namespace chaosbench::reports {

struct GateOptions {
  double alpha = 0.01;
  double default_tolerance = 0.05;  // 5%
  std::size_t min_samples = 8;
  std::size_t min_runs = 3;  // repeated runs: fewer on a side gives WARN
  int bootstrap_resamples = 2000;
  std::uint64_t seed = 1;
};

Comparison compare_runs(const RunResult& baseline, const RunResult& current, const GateOptions& options = {});

}  // namespace chaosbench::reports

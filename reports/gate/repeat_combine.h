// The combined result of repeated runs (`run --repeat N`): one results.json whose metric
// records hold each run's figures (MetricRecord::runs) and, as value and stats, their
// medians over the runs (common/values/percentile.h, as every p50 here). The gate then compares
// run by run (gate_runs.h). Pure.
//
// What the combined result holds:
// - scenario, environment, seed, phases and faults: the first run's (each run's own are in
//   its directory); run_id the one given; started_at the first run's; duration_s the sum.
// - metrics: every record (name and labels) of any run, in first-seen order; value the
//   median of the runs' values; stats each field's median over the runs (n and sum their
//   totals); runs the per-run value, p50 and p99.
// - checks: each check re-judged on the median over the runs of the value it judged, so
//   a check that one noisy run of five misses does not fail the whole.
// - verdict: the runs' own verdicts with their check failures left out (those are
//   re-judged above), folded as one run folds its failures (reports/model/judgement.h: an
//   interruption first, then an abort, else the first failure, named "run N: ..."), then
//   the re-judged checks.
// - series, events, processes and probes are left to each run's own results.json.
#pragma once

#include <string>
#include <vector>

#include "reports/model/run_model.h"

namespace chaosbench::reports {

struct RunToCombine {
  RunResult result;
  std::string dir;  // relative to the combined result's directory
};

RunResult combine_runs(const std::vector<RunToCombine>& runs, const std::string& run_id, bool interleaved);

}  // namespace chaosbench::reports

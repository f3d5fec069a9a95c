// The baseline gate over repeated runs (`run --repeat N`, combined results): a record is
// compared through one figure per run and side — each run's median (p50), its p99 for
// latency-like metrics, its value for a derived single number — so the variance between
// runs, which one run per side can only guess at, is measured.
// Test: Welch's unequal-variance t test on the logarithms of the figures when all are
// positive (a ratio of geometric means, the natural scale of times and rates whose noise
// is proportional), else on the figures themselves. The p-values of all run-level rows of
// a comparison are adjusted together (Benjamini-Hochberg), so when nothing changed the
// chance that any row fails stays at alpha however many metrics a scenario has. A row FAILs when its
// adjusted p < alpha AND the estimated change lies beyond the tolerance in the worse
// direction (asv's rule: a factor and significance). The run-level variance is the
// noise, so no within-run band is added. Fewer than min_runs figures on a side (a side
// that is a single run has one): WARN, with the numbers. Pure.
#pragma once

#include <vector>

#include "reports/gate/gate.h"
#include "reports/model/run_model.h"

namespace chaosbench::reports {

// Appends the rows of `cur` against `base` (same name and labels) to `out`, unjudged.
void compare_run_level(const MetricRecord& base, const MetricRecord& cur, double tolerance, const GateOptions& options,
                       std::vector<MetricComparison>& out);

// Adjusts the p-values of the run-level rows (basis "runs") among `rows` together and
// sets their status and reason. Call once, after every row was appended.
void judge_run_level_rows(std::vector<MetricComparison>& rows, const GateOptions& options);

}  // namespace chaosbench::reports

// From what the workload reported to the run model's numbers: phases from the fault
// timeline, samples pooled across ranks into one record per (metric, labels, phase) with
// stats, derived collective metrics (algbw, busbw, iter_cv, avg_busbw), and per-rank
// series. Pure functions over values; the runner calls them once, after the workload.
#pragma once

#include <vector>

#include "harness/plan/fault_schedule.h"
#include "harness/collect/sample_store.h"
#include "reports/model/run_model.h"

namespace chaosbench::harness {

// Percentiles (common/values/percentile.h), mean, population stddev, min, max, sum. Empty
// input: n = 0.
reports::Stats compute_stats(std::vector<double> values);

// baseline [0, first apply), fault:NAME per applied occurrence [applied, reverted or end),
// recovery:NAME [reverted, next apply of any fault or end). Sorted by start.
std::vector<reports::Phase> build_phases(const FaultSchedule& schedule, const std::vector<FaultSpec>& faults,
                                         double end_s);

// One record per (name, labels without rank, phase) for every phase with samples, plus
// "overall". Sample times are Unix seconds; t0_wall is the workload's start.
std::vector<reports::MetricRecord> aggregate(const std::vector<StoredSample>& samples, double t0_wall,
                                             const std::vector<reports::Phase>& phases);

// Per (name, labels with rank) time series, t relative to t0_wall, at most
// `max_points` points each (evenly thinned beyond that).
std::vector<reports::Series> build_series(const std::vector<StoredSample>& samples, double t0_wall,
                                          std::size_t max_points = 20000);

reports::Labels to_report_labels(const bench::Labels& labels);

}  // namespace chaosbench::harness

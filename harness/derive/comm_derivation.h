// Collective metrics derived from per-iteration times, as nccl-tests defines them
// (doc/PERFORMANCE.md): algbw = bytes / mean time (GB/s, 10^9), busbw = algbw x the
// collective's factor (bench/collective/collective_kind.h), iter_cv = stddev / mean,
// avg_busbw = mean busbw over a sweep.
#pragma once

#include <vector>

#include "reports/model/run_model.h"

namespace chaosbench::harness {

// From one comm/latency group (per-iteration microseconds, labels with collective,
// bytes and ranks, and phase): comm/algbw, comm/busbw and comm/iter_cv records.
// Returns nothing when the labels lack what the formulas need.
std::vector<reports::MetricRecord> derive_comm_records(const reports::Labels& labels,
                                                       const std::vector<double>& latency_us);

// comm/avg_busbw per (phase, collective, algorithm, ranks) over the busbw records given.
std::vector<reports::MetricRecord> derive_avg_busbw(const std::vector<reports::MetricRecord>& records);

}  // namespace chaosbench::harness

// One metric record's values in each run of a repeated run (`run --repeat N`): what the
// combined results.json keeps per record so that the gate can test run-level figures
// (between-run variance measured, not inferred from samples within one run).
#pragma once

#include <vector>

namespace chaosbench::reports {

// One entry per run that has the record, in run order. p50 and p99 are the runs' own
// percentiles (common/values/percentile.h) of the samples behind the record (its stats); empty
// for a derived single number (bus bandwidth, throughput, resilience/*), which has only `value`.
struct RunValues {
  std::vector<double> value;
  std::vector<double> p50;
  std::vector<double> p99;
};

}  // namespace chaosbench::reports

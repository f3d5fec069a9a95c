// The run's metrics in Bencher Metric Format (BMF, bencher.dev/docs/reference/
// bencher-metric-format): {benchmark: {measure: {value, lower_value, upper_value}}}, for
// `bencher run --adapter json` and any tracker that reads it.
//   benchmark  "<scenario>/<phase>", then the record's other labels sorted as
//              " [key=value, ...]" (Bencher takes names up to 1024 characters)
//   measure    the metric's name, as `chaosbench metrics` lists it (up to 64 characters)
//   value      the record's value (its aggregation: mean, sum, last or max)
//   lower_value, upper_value  the smallest and largest sample in the phase, when the
//              record has two or more and the value lies between them; in a combined
//              result of repeated runs (value: the median over runs) the smallest and
//              largest of the runs' values instead
// A record whose value is not finite, or whose names exceed Bencher's limits, is left out
// rather than cut (a cut name could merge two series). Pure.
#pragma once

#include <string>

#include "reports/model/run_model.h"

namespace chaosbench::reports {

std::string render_bmf(const RunResult& run);

}  // namespace chaosbench::reports

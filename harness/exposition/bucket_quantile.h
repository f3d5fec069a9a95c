// A quantile estimated from a histogram's cumulative buckets, as Prometheus's
// histogram_quantile() does: the bucket holding the rank, linearly interpolated between
// its bounds (the first bucket's lower bound is 0 when its upper one is positive; a rank
// in the +Inf bucket gives the largest finite bound). Pure.
#pragma once

#include <optional>
#include <utility>
#include <vector>

namespace chaosbench::harness::prometheus {

// `buckets`: (upper bound "le", cumulative count) in any order; the counts of one
// interval (differences between two scrapes) or of all time. nullopt without
// observations, without a +Inf bucket, or for q outside [0, 1].
std::optional<double> bucket_quantile(double q, std::vector<std::pair<double, double>> buckets);

}  // namespace chaosbench::harness::prometheus

// The metric catalogue: every metric chaosbench defines, as one table in the order
// `chaosbench metrics` prints it, with how reports show each (common/metrics/metric_display.h).
// It is the metrics' reference (docs/metrics-protocol.md says how a workload sends them).
// Workloads may send metrics outside it; those keep the unit they were sent with,
// aggregate by mean, have no better-direction and no display hints.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "common/metrics/metric_spec.h"

namespace chaosbench::common {

std::span<const MetricSpec> metric_catalogue();

// nullptr when the name is not in the catalogue.
const MetricSpec* find_metric(std::string_view name);

// The catalogue's metrics that have a display rank (e.g. &MetricDisplay::key_rank), in
// rank order; those with rank 0 are left out.
std::vector<const MetricSpec*> metrics_ranked_by(int MetricDisplay::*rank);

}  // namespace chaosbench::common

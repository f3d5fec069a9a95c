// The metric catalogue of ../shared/METRICS.md as data: one table, in the order
// `chaosbench metrics` prints it. Workloads may send metrics outside it; those keep the
// unit they were sent with, aggregate by mean and have no better-direction.
#pragma once

#include <span>
#include <string_view>

#include "bench/catalogue/metric_spec.h"

namespace chaosbench::bench {

std::span<const MetricSpec> metric_catalogue();

// nullptr when the name is not in the catalogue.
const MetricSpec* find_metric(std::string_view name);

}  // namespace chaosbench::bench

// What a metric is: name, unit, better-direction, how samples of it combine, what it
// means, and how reports show it. Reporters format by unit, gates read `better`, and
// summaries pick and order metrics by `display`, so a new metric is one row in the
// catalogue and no reporter change.
#pragma once

#include <string_view>

#include "common/metrics/better.h"
#include "common/metrics/metric_display.h"

namespace chaosbench::common {

// How the samples of one series combine into a phase's value. The stats (min, p50, p99,
// max...) are always computed over the samples; `value` follows this rule.
enum class Aggregation {
  kMean,  // mean of the samples (times, rates)
  kSum,   // sum of the samples (counts: wrong elements, errors)
  kLast,  // the newest sample (a loss curve's final value)
  kMax,   // the largest sample (peak memory, counters)
  kMin,   // the smallest sample (first time a target was reached)
};

struct MetricSpec {
  std::string_view name;
  std::string_view unit;
  Better better;  // never kUnknown
  Aggregation aggregation;
  std::string_view description;
  MetricDisplay display{};  // default: no summary picks it out; full tables still list it
};

std::string_view to_string(Aggregation a);   // "mean", "sum", "last", "max", "min"

}  // namespace chaosbench::common

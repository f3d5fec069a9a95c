// What a metric is: name, unit, better-direction, how samples of it combine, and what it
// means. Reporters format by unit and gates read `better`, so a new metric is one line in
// the catalogue and no reporter change.
#pragma once

#include <string_view>

namespace chaosbench::bench {

enum class Better { kHigher, kLower, kNone };

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
  Better better;
  Aggregation aggregation;
  std::string_view description;
};

std::string_view to_string(Better b);        // "higher", "lower", "none"
std::string_view to_string(Aggregation a);   // "mean", "sum", "last", "max", "min"

}  // namespace chaosbench::bench

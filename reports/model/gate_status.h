// The baseline gate's judgement as a type (reports/gate/gate.h): of one compared metric
// (MetricComparison::status) and of the whole comparison (Comparison::verdict, the worst
// of its metrics). results.json writes it as "pass", "warn" or "fail".
#pragma once

#include <string_view>

namespace chaosbench::reports {

// In order of severity: a comparison's verdict is the largest status of its metrics.
enum class GateStatus {
  kPass,  // "pass": no significant regression beyond the tolerance
  kWarn,  // "warn": too little data to judge
  kFail,  // "fail": a significant regression
};

constexpr std::string_view to_string(GateStatus s) {
  switch (s) {
    case GateStatus::kPass: return "pass";
    case GateStatus::kWarn: return "warn";
    case GateStatus::kFail: return "fail";
  }
  return "fail";
}

// The inverse of to_string; an unknown word (a hand-edited results.json) reads as kFail.
constexpr GateStatus parse_gate_status(std::string_view word) {
  if (word == "pass") return GateStatus::kPass;
  if (word == "warn") return GateStatus::kWarn;
  return GateStatus::kFail;
}

}  // namespace chaosbench::reports

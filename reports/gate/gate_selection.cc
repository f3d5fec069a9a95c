#include "reports/gate/gate_selection.h"

namespace chaosbench::reports {

std::string phase_of(const Labels& labels) {
  auto it = labels.find("phase");
  return it == labels.end() ? std::string("overall") : label_to_string(it->second);
}

bool gated(const MetricRecord& record) {
  return record.name.rfind("fault/", 0) != 0 && (record.better == common::Better::kLower || record.better == common::Better::kHigher);
}

bool latency_like(const MetricRecord& record) {
  const std::string& u = record.unit;
  return record.better == common::Better::kLower && (u == "s" || u == "ms" || u == "us" || u == "ns");
}

double tolerance_for(const MetricRecord& record, const std::vector<ScenarioFacts::CheckTolerance>& rules,
                     double dflt) {
  double tol = dflt;
  for (const auto& rule : rules) {
    if (rule.metric != record.name || (rule.phase && *rule.phase != phase_of(record.labels))) continue;
    bool match = true;
    for (const auto& [k, text] : rule.labels) {
      auto it = record.labels.find(k);
      match = match && it != record.labels.end() && label_to_string(it->second) == text;
    }
    if (match) tol = rule.tolerance;
  }
  return tol;
}

}  // namespace chaosbench::reports

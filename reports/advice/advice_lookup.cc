#include "reports/advice/advice_lookup.h"

#include <fmt/format.h>

#include "reports/model/text_format.h"

namespace chaosbench::reports {

const MetricRecord* find_record(const RunResult& run, std::string_view name, std::string_view phase, const Labels& labels) {
  for (const auto& m : run.metrics)
    if (m.name == name && label_value(m.labels, "phase") == phase && without_phase(m.labels) == labels) return &m;
  return nullptr;
}

double p50(const MetricRecord& m) { return m.stats ? m.stats->p50 : m.value; }

std::string tuning_phase(const RunResult& run, std::string_view name) {
  for (const auto& m : run.metrics)
    if (m.name == name && label_value(m.labels, "phase") == "baseline") return "baseline";
  return "overall";
}

std::string pct(double fraction) { return format_value(fraction * 100, "%"); }

const FaultRecord* fault_of_phase(const RunResult& run, std::string_view phase) {
  if (!phase.starts_with("fault:")) return nullptr;
  for (const auto& f : run.faults)
    if (f.name == phase.substr(6)) return &f;
  return nullptr;
}

std::string describe_fault(const FaultRecord& f) {
  std::string targets;
  for (const auto& t : f.targets) targets += (targets.empty() ? "" : ",") + t;
  return fmt::format("{} ({}{}{})", f.name, f.type, targets.empty() ? "" : " on ", targets);
}

}  // namespace chaosbench::reports

#include "harness/derive/diagnosis_derivation.h"

#include <algorithm>
#include <optional>

namespace chaosbench::harness {

std::vector<reports::MetricRecord> diagnosis_metrics(const std::vector<reports::EventRecord>& events,
                                                     const std::vector<reports::FaultRecord>& faults, bool ran) {
  std::vector<reports::MetricRecord> out;
  if (!ran) return out;
  std::optional<double> first_fault;
  for (const auto& f : faults)
    if (f.applied_at_s && f.type != "marker") first_fault = std::min(first_fault.value_or(*f.applied_at_s), *f.applied_at_s);
  std::optional<double> localised;
  for (const auto& e : events) {
    if (e.name != "diagnosis_named" || e.rank != -1) continue;
    if (first_fault && e.t >= *first_fault && !localised) localised = e.t - *first_fault;
  }
  const reports::Labels overall{{"phase", std::string("overall")}};
  if (localised) out.push_back({"diagnosis/time_to_localise", "s", common::Better::kLower, overall, *localised, std::nullopt});
  return out;
}

}  // namespace chaosbench::harness

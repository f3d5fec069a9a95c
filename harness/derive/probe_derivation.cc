#include "harness/derive/probe_derivation.h"

#include <algorithm>

#include "harness/derive/train_events.h"

namespace chaosbench::harness {

std::vector<reports::MetricRecord> probe_metrics(const std::vector<reports::ProbeRecord>& probes,
                                                 const std::optional<reports::AbortRecord>& abort) {
  std::vector<reports::MetricRecord> out;
  for (const auto& p : probes) {
    auto labels = phase_labels("overall");
    labels["probe"] = p.name;
    out.push_back(catalogue_record("probe/failures", std::move(labels), static_cast<double>(p.failures)));
  }
  // A revert stamped before the decision (clocks read on different threads) is no
  // negative latency: it reads as 0.
  if (abort && abort->reverted_s)
    out.push_back(catalogue_record("fault/abort_latency", phase_labels("overall"),
                                   std::max(0.0, *abort->reverted_s - abort->decided_s) * 1000));
  return out;
}

}  // namespace chaosbench::harness

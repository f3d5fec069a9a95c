#include "reports/model/probe_spans.h"

#include <algorithm>

namespace chaosbench::reports {

std::vector<ProbeSpan> probe_spans(const ProbeRecord& probe, double end_s) {
  std::vector<const ProbeTransition*> order;
  for (const auto& t : probe.transitions) order.push_back(&t);
  std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) { return a->t < b->t; });
  std::vector<ProbeSpan> out;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const auto& t = *order[i];
    const double until = i + 1 < order.size() ? order[i + 1]->t : end_s;
    if (!t.active) continue;  // the probe was not evaluated in this stretch
    out.push_back({t.t, std::max(t.t, until), t.ok, t.value, t.evidence});
  }
  return out;
}

}  // namespace chaosbench::reports

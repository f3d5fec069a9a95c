#include "harness/runner/gpu_fault_derivation.h"

#include <algorithm>
#include <map>
#include <set>

namespace chaosbench::harness {
namespace {

void sdc_records(const TrainTimeline& tl, std::vector<reports::MetricRecord>& out) {
  // One flip event per bit; one injection is a (rank, step): its bits flipped together.
  std::set<std::pair<int, std::int64_t>> seen;
  std::size_t injections = 0, caught = 0;
  for (const auto& flip : tl.bitflips) {
    if (!seen.insert({flip.rank, flip.step}).second) continue;
    ++injections;
    // Every rank reports the same detection; the first at or after the flip's step is it.
    auto found = std::find_if(tl.sdc_detections.begin(), tl.sdc_detections.end(),
                              [&](const auto& d) { return d.step >= flip.step && d.t >= flip.t; });
    if (found == tl.sdc_detections.end()) continue;
    ++caught;
    auto labels = phase_labels("overall");
    labels["rank"] = static_cast<std::int64_t>(flip.rank);
    labels["step"] = flip.step;
    labels["tensor"] = flip.tensor;
    out.push_back(catalogue_record("resilience/sdc_detection_steps", std::move(labels),
                                   static_cast<double>(found->step - flip.step)));
  }
  if (injections == 0) return;
  out.push_back(catalogue_record("resilience/sdc_caught", phase_labels("overall"),
                                 static_cast<double>(caught) / static_cast<double>(injections)));
}

void xid_records(const TrainTimeline& tl, std::vector<reports::MetricRecord>& out) {
  std::map<std::int64_t, int> count;
  for (const auto& e : tl.xids) ++count[e.xid];
  for (const auto& [xid, n] : count) {
    auto labels = phase_labels("overall");
    labels["xid"] = xid;
    out.push_back(catalogue_record("gpu/xid_events", std::move(labels), n));
  }
}

}  // namespace

void gpu_fault_records(const TrainTimeline& timeline, std::vector<reports::MetricRecord>& out) {
  sdc_records(timeline, out);
  xid_records(timeline, out);
}

}  // namespace chaosbench::harness

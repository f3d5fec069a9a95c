#include "harness/derive/gpu_fault_derivation.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>

namespace chaosbench::harness {
namespace {

// A flip of step s is caught by the first replica disagreement found while computing a
// later step and before the next flip's step (a later flip's detection is its own);
// every rank reports that one detection, which counts once.
void sdc_records(const TrainTimeline& tl, std::vector<reports::MetricRecord>& out) {
  // One flip event per bit; one injection is a (rank, step): its bits flipped together.
  std::vector<const SdcEvent*> injections;
  std::set<std::pair<int, std::int64_t>> seen;
  for (const auto& flip : tl.bitflips)
    if (seen.insert({flip.rank, flip.step}).second) injections.push_back(&flip);
  std::set<std::int64_t> used;  // detections (by step) already credited
  std::size_t caught = 0;
  for (std::size_t i = 0; i < injections.size(); ++i) {
    const auto& flip = *injections[i];
    std::int64_t until = INT64_MAX;
    for (std::size_t j = i + 1; j < injections.size(); ++j)
      if (injections[j]->step > flip.step) until = std::min(until, injections[j]->step);
    auto found = std::find_if(tl.sdc_detections.begin(), tl.sdc_detections.end(), [&](const auto& d) {
      return d.step > flip.step && d.step <= until && d.t >= flip.t && !used.count(d.step);
    });
    if (found == tl.sdc_detections.end()) continue;
    used.insert(found->step);
    ++caught;
    auto labels = phase_labels("overall");
    labels["rank"] = static_cast<std::int64_t>(flip.rank);
    labels["step"] = flip.step;
    labels["tensor"] = flip.tensor;
    out.push_back(catalogue_record("resilience/sdc_detection_steps", std::move(labels),
                                   static_cast<double>(found->step - flip.step)));
  }
  if (injections.empty()) return;
  out.push_back(catalogue_record("resilience/sdc_caught", phase_labels("overall"),
                                 static_cast<double>(caught) / static_cast<double>(injections.size())));
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

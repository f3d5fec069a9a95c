#include "harness/derive/live_diagnosis.h"

#include <chrono>

#include "harness/derive/aggregator.h"

namespace chaosbench::harness {

LiveDiagnosis::LiveDiagnosis(SampleStore& store, double t0_wall, double window_s, Named named)
    : store_(store), t0_wall_(t0_wall), named_(std::move(named)), engine_(window_s) {}

LiveDiagnosis::~LiveDiagnosis() { stop(); }

void LiveDiagnosis::set_rank_node(int rank, const std::string& node) { engine_.set_rank_node(rank, node); }

void LiveDiagnosis::start() { thread_.start(std::chrono::seconds(1), [this] { tick(); }); }

void LiveDiagnosis::stop() { thread_.stop(); }

// The samples that arrived since the last tick (a cursor into the store: each once), the
// ones the engine reads copied out under the store's lock, then the windows the lag has
// closed.
void LiveDiagnosis::tick() {
  std::vector<StoredSample> fresh;
  cursor_ = store_.visit_from(cursor_, [&](const StoredSample& s) {
    if (reports::Diagnoser::reads(s.sample.name)) fresh.push_back(s);
  });
  for (const auto& st : fresh) {
    const auto& s = st.sample;
    auto labels = to_report_labels(s.labels);
    labels["rank"] = static_cast<std::int64_t>(s.rank);
    engine_.add(s.name, labels, s.time - t0_wall_, s.value);
  }
  const double now = bench::wall_time_now();
  for (const auto& c : engine_.advance(now - t0_wall_)) named_(c, ++culprits_);
  store_.add(bench::Sample{-1, now, "diagnosis/culprits", static_cast<double>(culprits_), "count", {}}, now);
}

}  // namespace chaosbench::harness

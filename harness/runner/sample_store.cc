#include "harness/runner/sample_store.h"

namespace chaosbench::harness {

void SampleStore::add(const bench::Record& record, double received_at) {
  if (const auto* s = std::get_if<bench::Sample>(&record)) {
    std::lock_guard lock(mutex_);
    samples_.push_back({*s, received_at});
    if (samples_.back().sample.time <= 0) samples_.back().sample.time = received_at;
    return;
  }
  bench::Event e = std::get<bench::Event>(record);
  if (e.time <= 0) e.time = received_at;
  if (e.rank >= 0) last_event_received_ = received_at;
  if (e.name == "step") {
    auto it = e.fields.find("step");
    if (it != e.fields.end()) {
      std::int64_t step = -1;
      if (const auto* i = std::get_if<std::int64_t>(&it->second)) step = *i;
      else if (const auto* d = std::get_if<double>(&it->second)) step = static_cast<std::int64_t>(*d);
      std::int64_t prev = max_step_.load();
      while (step > prev && !max_step_.compare_exchange_weak(prev, step)) {
      }
      std::lock_guard lock(mutex_);
      for (auto& [watched, at] : watched_)
        if (!at && step >= watched) at = received_at;
    }
  }
  std::lock_guard lock(mutex_);
  events_.push_back({e, received_at});
}

void SampleStore::watch_step(std::int64_t step) {
  std::lock_guard lock(mutex_);
  watched_.emplace_back(step, std::nullopt);
}

std::optional<double> SampleStore::step_reached_at(std::int64_t step) const {
  std::lock_guard lock(mutex_);
  for (const auto& [watched, at] : watched_)
    if (watched == step) return at;
  return std::nullopt;
}

std::vector<StoredSample> SampleStore::samples() const {
  std::lock_guard lock(mutex_);
  return samples_;
}

void SampleStore::visit_recent(double received_since, const std::function<void(const StoredSample&)>& visit) const {
  std::lock_guard lock(mutex_);
  for (auto it = samples_.rbegin(); it != samples_.rend() && it->received_at >= received_since; ++it) visit(*it);
}

std::vector<StoredEvent> SampleStore::events() const {
  std::lock_guard lock(mutex_);
  return events_;
}

std::uint64_t SampleStore::sample_count() const {
  std::lock_guard lock(mutex_);
  return samples_.size();
}

std::uint64_t SampleStore::event_count() const {
  std::lock_guard lock(mutex_);
  return events_.size();
}

}  // namespace chaosbench::harness

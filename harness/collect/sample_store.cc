#include "harness/collect/sample_store.h"

#include <algorithm>
#include <bit>
#include <string_view>
#include <tuple>

namespace chaosbench::harness {
namespace {

// The latest-value index's hash of a series: its name, rank and labels (kind and value).
std::uint64_t mix(std::uint64_t h, std::uint64_t v) { return (h ^ v) * 0x100000001b3ull + (h >> 29); }

std::uint64_t series_hash(const bench::Sample& s) {
  const std::hash<std::string_view> text;
  std::uint64_t h = mix(text(s.name), static_cast<std::uint64_t>(s.rank));
  for (const auto& [key, value] : s.labels) {
    h = mix(mix(h, text(key)), value.index());
    if (const auto* str = std::get_if<std::string>(&value)) h = mix(h, text(*str));
    else if (const auto* i = std::get_if<std::int64_t>(&value)) h = mix(h, static_cast<std::uint64_t>(*i));
    else h = mix(h, std::bit_cast<std::uint64_t>(std::get<double>(value)));
  }
  return h;
}

bool same_series(const LatestSample& a, const bench::Sample& s) {
  return a.rank == s.rank && a.name == s.name && a.labels == s.labels;
}

}  // namespace

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

std::size_t SampleStore::visit_from(std::size_t from, const std::function<void(const StoredSample&)>& visit) const {
  std::lock_guard lock(mutex_);
  for (std::size_t i = from; i < samples_.size(); ++i) visit(samples_[i]);
  return std::max(from, samples_.size());
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

void SampleStore::fold_latest() const {
  for (; latest_folded_ < samples_.size(); ++latest_folded_) {
    const bench::Sample& s = samples_[latest_folded_].sample;
    const std::uint64_t h = series_hash(s);
    auto [it, end] = latest_.equal_range(h);
    while (it != end && !same_series(it->second, s)) ++it;
    if (it == end) it = latest_.emplace(h, LatestSample{s.name, s.rank, s.labels, s.unit, 0, 0});
    it->second.value = s.value;
    it->second.time = s.time;
  }
}

std::vector<LatestSample> SampleStore::latest() const {
  std::lock_guard lock(mutex_);
  fold_latest();
  std::vector<LatestSample> out;
  out.reserve(latest_.size());
  for (const auto& [h, latest] : latest_) out.push_back(latest);
  std::sort(out.begin(), out.end(), [](const LatestSample& a, const LatestSample& b) {
    return std::tie(a.name, a.rank, a.labels) < std::tie(b.name, b.rank, b.labels);
  });
  return out;
}

std::size_t SampleStore::series_count() const {
  std::lock_guard lock(mutex_);
  fold_latest();
  return latest_.size();
}

}  // namespace chaosbench::harness

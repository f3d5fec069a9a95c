#include "bench/llm/load/llm_metrics_queue.h"

#include <chrono>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace chaosbench::bench::llm {

LlmMetricsQueue::LlmMetricsQueue(MetricsClient& metrics) : metrics_(metrics), connected_(metrics.connected()) {
  if (connected_) writer_ = std::thread([this] { write_loop(); });
}

LlmMetricsQueue::~LlmMetricsQueue() {
  if (!connected_) return;
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_one();
  writer_.join();
}

void LlmMetricsQueue::sample(std::string_view name, double value, std::string_view unit, Labels labels) {
  if (!connected_) return;
  Sample s{metrics_.rank(), wall_time_now(), std::string(name), value, std::string(unit), std::move(labels)};
  std::lock_guard lock(mutex_);
  if (queued_.size() >= kMaxQueued) {
    ++dropped_;
    return;
  }
  queued_.emplace_back(std::move(s));
}

void LlmMetricsQueue::event(std::string_view name, Labels fields) {
  if (!connected_) return;
  Event e{metrics_.rank(), wall_time_now(), std::string(name), std::move(fields)};
  std::lock_guard lock(mutex_);
  queued_.emplace_back(std::move(e));
}

void LlmMetricsQueue::flush() {
  if (!connected_) return;
  {
    std::lock_guard lock(mutex_);
    flush_asked_ = true;
  }
  wake_.notify_one();
}

void LlmMetricsQueue::write_loop() {
  std::vector<Record> batch;
  for (bool last = false; !last;) {
    std::uint64_t dropped = 0;
    {
      std::unique_lock lock(mutex_);
      wake_.wait_for(lock, std::chrono::milliseconds(100), [this] { return flush_asked_ || stop_; });
      batch.swap(queued_);
      dropped = std::exchange(dropped_, 0);
      flush_asked_ = false;
      last = stop_;
    }
    if (dropped > 0)
      metrics_.event("llm_metrics_dropped", {{"count", static_cast<std::int64_t>(dropped)}});
    for (auto& r : batch) {
      std::visit(
          [this](auto& rec) {
            if constexpr (std::is_same_v<std::decay_t<decltype(rec)>, Sample>)
              metrics_.sample(rec.name, rec.value, rec.unit, std::move(rec.labels), rec.time);
            else
              metrics_.event(rec.name, std::move(rec.fields), rec.time);
          },
          r);
    }
    batch.clear();
    metrics_.flush();
  }
}

}  // namespace chaosbench::bench::llm

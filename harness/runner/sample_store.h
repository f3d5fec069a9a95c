// Everything the workload reported, kept as it arrived: samples and events with the rank
// and times. Filled by the metrics server's thread, read by the runner's thread; what a
// rank sent before it died stays here.
// Threads: every method is safe to call from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "bench/protocol/record.h"

namespace chaosbench::harness {

struct StoredSample {
  bench::Sample sample;
  double received_at = 0;  // harness clock, Unix seconds
};

struct StoredEvent {
  bench::Event event;
  double received_at = 0;
};

class SampleStore {
 public:
  void add(const bench::Record& record, double received_at);

  std::vector<StoredSample> samples() const;  // a copy, in arrival order
  std::vector<StoredEvent> events() const;
  std::uint64_t sample_count() const;
  std::uint64_t event_count() const;

  // The highest step any rank reported with a "step" event ({"step": N}); -1 before any.
  std::int64_t max_step() const { return max_step_.load(); }

 private:
  mutable std::mutex mutex_;
  std::vector<StoredSample> samples_;
  std::vector<StoredEvent> events_;
  std::atomic<std::int64_t> max_step_{-1};
};

}  // namespace chaosbench::harness

// Everything the workload reported, kept as it arrived: samples and events with the rank
// and times. Filled by the metrics server's thread, read by the runner's thread; what a
// rank sent before it died stays here.
// Threads: every method is safe to call from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <optional>
#include <utility>
#include <vector>

#include "bench/protocol/record.h"

namespace chaosbench::harness {

// Records keep the sender's clock; one without a time (0) gets the receive time, so it
// still falls into the right phase.
struct StoredSample {
  bench::Sample sample;
  double received_at = 0;  // harness clock, Unix seconds
};

struct StoredEvent {
  bench::Event event;
  double received_at = 0;
};

// One series' newest sample (a series: name, rank and labels), for the live exposition.
struct LatestSample {
  std::string name;
  int rank = 0;
  bench::Labels labels;
  std::string unit;  // as the series' first sample gave it
  double value = 0;
  double time = 0;   // the sample's time (Unix seconds)
};

class SampleStore {
 public:
  void add(const bench::Record& record, double received_at);

  std::vector<StoredSample> samples() const;  // a copy, in arrival order
  // Calls `visit` for each sample received at or after `received_since` (harness clock,
  // Unix seconds), newest first, without copying: the scan walks back from the newest
  // and stops at the first older one, so it costs the samples of that span, not the
  // store (a live probe's window, every second). Arrival order is received_at order up
  // to the wall clock stepping back; a caller that needs a window of the senders' times
  // passes a received_since with some slack before it. Runs under the store's lock:
  // `visit` must be quick and must not call back into the store (the metrics server's
  // thread waits meanwhile).
  void visit_recent(double received_since, const std::function<void(const StoredSample&)>& visit) const;
  // Calls `visit` for the samples from arrival index `from` on, in arrival order, and
  // returns the index after the last: a reader that keeps it as a cursor sees every sample
  // once, however late its receive time was stamped. Under the store's lock, as above.
  std::size_t visit_from(std::size_t from, const std::function<void(const StoredSample&)>& visit) const;
  std::vector<StoredEvent> events() const;
  std::uint64_t sample_count() const;
  std::uint64_t event_count() const;

  // The highest step any rank reported with a "step" event ({"step": N}); -1 before any.
  std::int64_t max_step() const { return max_step_.load(); }
  // When the newest event of any rank arrived (harness clock, Unix seconds); 0 before any.
  // The harness's own events (rank -1) do not count.
  double last_event_received() const { return last_event_received_.load(); }

  // Remembers when the first step event reaching `step` arrives (for at_step triggers'
  // apply latency). Call before the workload starts.
  void watch_step(std::int64_t step);
  // The receive time (Unix seconds) of the first event that reached a watched step.
  std::optional<double> step_reached_at(std::int64_t step) const;

  // Each series' newest sample by arrival, ordered by name, rank and labels. Kept off
  // add()'s path: each call folds the samples that arrived since the last one into an
  // index (a hash and one lookup each, ~0.1 us; an allocation only for a series' first),
  // so a run that never asks pays nothing and one scraped every second pays once a second.
  std::vector<LatestSample> latest() const;
  std::size_t series_count() const;

 private:
  void fold_latest() const;  // under mutex_: samples_[latest_folded_..] into latest_


  mutable std::mutex mutex_;
  std::vector<StoredSample> samples_;
  std::vector<StoredEvent> events_;
  std::atomic<std::int64_t> max_step_{-1};
  std::atomic<double> last_event_received_{0};
  std::vector<std::pair<std::int64_t, std::optional<double>>> watched_;  // under mutex_
  // Under mutex_; filled lazily by the const readers (samples_ only ever grows). Keyed
  // by a hash of the series (name, rank, labels), each entry checked on a hit.
  mutable std::unordered_multimap<std::uint64_t, LatestSample> latest_;
  mutable std::size_t latest_folded_ = 0;
};

}  // namespace chaosbench::harness

// Collects what the generator thread observes into a LoadResult and, while the run goes,
// streams it to the harness through a MetricsClient: every completed request's latency as
// an infer/latency sample (batched, flushed about every 100 ms), and per window (1 s
// unless load.window says otherwise) infer/throughput (completed/s) and infer/error_rate
// (%). Generator thread only.
#pragma once

#include <chrono>
#include <vector>

#include "bench/load/load_result.h"
#include "bench/protocol/metrics_client.h"

namespace chaosbench::bench::load {

class LoadRecorder {
 public:
  using Clock = std::chrono::steady_clock;

  LoadRecorder(MetricsClient& metrics, Clock::time_point start, bool keep_requests,
               std::chrono::milliseconds window = std::chrono::seconds(1));

  void issued() { ++result_.issued; }
  void completed(Clock::time_point scheduled, Clock::time_point now);
  void failed(Clock::time_point scheduled, Clock::time_point now);  // no attempt left
  LoadResult& counters() { return result_; }  // timeouts, failovers, ... counted in place

  // Flushes samples and closes windows that `now` has passed. Call often (cheap).
  void tick(Clock::time_point now);
  // Closes the last (partial) window, flushes, and returns the result.
  LoadResult finish(Clock::time_point now);

 private:
  void close_window(double length_s);
  double since_start(Clock::time_point t) const { return std::chrono::duration<double>(t - start_).count(); }

  MetricsClient& metrics_;
  std::chrono::milliseconds window_length_;
  Clock::time_point start_;
  bool keep_requests_;
  LoadResult result_;
  std::vector<float> all_latencies_;
  std::vector<float> window_latencies_;
  std::vector<float> unsent_latencies_;  // not yet written as samples
  LoadWindow window_;
  Clock::time_point window_end_;
  Clock::time_point next_flush_;
};

}  // namespace chaosbench::bench::load

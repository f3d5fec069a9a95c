// The server's own counters: what GET /metrics shows (Prometheus text exposition format
// 0.0.4) and the samples the worker forwards to the harness (infer/batch_size,
// infer/queue_time). Plain counters under one mutex: a request touches it twice.
// Threads: every method is thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "bench/serve/dynamic_batcher.h"

namespace chaosbench::bench::serve {

struct HarnessSample {
  const char* name;  // "infer/batch_size" or "infer/queue_time"
  double value;
  const char* unit;
  double time;  // seconds since the Unix epoch
};

// Cumulative histogram with fixed upper bounds (the last bucket is +Inf).
template <std::size_t N>
struct Histogram {
  std::array<double, N> bounds{};
  std::array<std::uint64_t, N + 1> counts{};
  double sum = 0;
  std::uint64_t count = 0;
  void observe(double v);
};

class ServeMetrics {
 public:
  // Samples waiting for drain_samples() beyond this are dropped (memory stays bounded
  // when nobody drains).
  static constexpr std::size_t kMaxPendingSamples = 1 << 18;

  ServeMetrics();
  void count_request(int status, double latency_s);
  void record_batch(const BatchDone& batch);
  std::uint64_t requests(int status) const;
  std::uint64_t batches() const;
  std::uint64_t batched_requests() const;

  // The /metrics body; queue_depth is read by the caller from the batcher.
  std::string prometheus_text(int queue_depth) const;

  // Moves out the samples recorded since the last call.
  std::vector<HarnessSample> drain_samples();

 private:
  mutable std::mutex mu_;
  std::map<int, std::uint64_t> by_status_;
  Histogram<12> latency_;
  Histogram<10> batch_size_;
  std::uint64_t batched_requests_ = 0;
  std::vector<HarnessSample> pending_;
};

}  // namespace chaosbench::bench::serve

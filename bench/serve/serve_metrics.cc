// ServeMetrics: counters, two histograms and the Prometheus text they render to, e.g.
//   chaosbench_infer_requests_total{code="200"} 1234
//   chaosbench_infer_request_duration_seconds_bucket{le="0.005"} 1200
//   chaosbench_infer_batch_size_bucket{le="16"} 80
//   chaosbench_infer_queue_depth 3
#include "bench/serve/serve_metrics.h"

#include <fmt/format.h>

#include "bench/protocol/record.h"

namespace chaosbench::bench::serve {

template <std::size_t N>
void Histogram<N>::observe(double v) {
  std::size_t i = 0;
  while (i < N && v > bounds[i]) ++i;
  ++counts[i];
  sum += v;
  ++count;
}

namespace {

template <std::size_t N>
void render(std::string& out, const char* name, const char* help, const Histogram<N>& h) {
  auto it = std::back_inserter(out);
  fmt::format_to(it, "# HELP {} {}\n# TYPE {} histogram\n", name, help, name);
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < N; ++i) {
    cumulative += h.counts[i];
    fmt::format_to(it, "{}_bucket{{le=\"{}\"}} {}\n", name, h.bounds[i], cumulative);
  }
  fmt::format_to(it, "{}_bucket{{le=\"+Inf\"}} {}\n{}_sum {}\n{}_count {}\n", name, h.count, name, h.sum, name,
                 h.count);
}

}  // namespace

ServeMetrics::ServeMetrics() {
  latency_.bounds = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5};
  batch_size_.bounds = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512};
}

void ServeMetrics::count_request(int status, double latency_s) {
  std::lock_guard lk(mu_);
  ++by_status_[status];
  latency_.observe(latency_s);
}

void ServeMetrics::record_batch(const BatchDone& batch) {
  const double now = wall_time_now();
  std::lock_guard lk(mu_);
  batch_size_.observe(batch.requests);
  batched_requests_ += static_cast<std::uint64_t>(batch.requests);
  if (pending_.size() + batch.queue_ms.size() + 1 > kMaxPendingSamples) return;
  pending_.push_back({"infer/batch_size", static_cast<double>(batch.requests), "requests", now});
  for (double ms : batch.queue_ms) pending_.push_back({"infer/queue_time", ms, "ms", now});
}

std::uint64_t ServeMetrics::requests(int status) const {
  std::lock_guard lk(mu_);
  auto it = by_status_.find(status);
  return it == by_status_.end() ? 0 : it->second;
}

std::uint64_t ServeMetrics::batches() const {
  std::lock_guard lk(mu_);
  return batch_size_.count;
}

std::uint64_t ServeMetrics::batched_requests() const {
  std::lock_guard lk(mu_);
  return batched_requests_;
}

std::string ServeMetrics::prometheus_text(int queue_depth) const {
  std::string out;
  auto it = std::back_inserter(out);
  std::lock_guard lk(mu_);
  out += "# HELP chaosbench_infer_requests_total HTTP requests answered, by status code.\n"
         "# TYPE chaosbench_infer_requests_total counter\n";
  for (const auto& [code, n] : by_status_)
    fmt::format_to(it, "chaosbench_infer_requests_total{{code=\"{}\"}} {}\n", code, n);
  render(out, "chaosbench_infer_request_duration_seconds", "Time from a complete request to its response.",
         latency_);
  render(out, "chaosbench_infer_batch_size", "Requests per model call.", batch_size_);
  fmt::format_to(it,
                 "# HELP chaosbench_infer_queue_depth Requests waiting for a batch.\n"
                 "# TYPE chaosbench_infer_queue_depth gauge\nchaosbench_infer_queue_depth {}\n",
                 queue_depth);
  return out;
}

std::vector<HarnessSample> ServeMetrics::drain_samples() {
  std::lock_guard lk(mu_);
  std::vector<HarnessSample> out;
  out.swap(pending_);
  return out;
}

}  // namespace chaosbench::bench::serve

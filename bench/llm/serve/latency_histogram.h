// A Prometheus histogram of latencies in seconds with fixed bucket bounds, lock-free, for
// the LLM server's vllm:time_to_first_token_seconds and vllm:time_per_output_token_seconds
// (the bounds are vLLM's, so dashboards built for vLLM read ours unchanged).
// Threads: observe() and text() are safe from any thread (atomics; a scrape may see one
// observation counted in the count but not yet in the sum).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace chaosbench::bench::llm {

class LatencyHistogram {
 public:
  explicit LatencyHistogram(std::vector<double> bounds);

  void observe(double seconds);
  // "# HELP/# TYPE" lines, the cumulative _bucket lines (le=...,+Inf), _sum and _count.
  std::string text(const char* name, const char* help, const std::string& model) const;
  std::uint64_t count() const { return count_.load(); }

  // vLLM's bounds for the two histograms.
  static std::vector<double> ttft_bounds();
  static std::vector<double> tpot_bounds();

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> buckets_;  // per bound, not cumulative; then +Inf
  std::atomic<std::uint64_t> count_{0};
  std::atomic<std::uint64_t> sum_ns_{0};  // the sum in nanoseconds (an integer adds atomically)
};

}  // namespace chaosbench::bench::llm

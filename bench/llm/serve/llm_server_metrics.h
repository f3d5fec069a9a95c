// Counters of the built-in LLM server, exposed on GET /metrics in the Prometheus text
// format under vLLM's names (vllm:num_requests_running, vllm:num_requests_waiting,
// vllm:kv_cache_usage_perc (0..1), vllm:num_preemptions_total, vllm:prompt_tokens_total,
// vllm:generation_tokens_total, vllm:request_success_total, and the histograms
// vllm:time_to_first_token_seconds and vllm:time_per_output_token_seconds, both measured
// as the client sees them: from a request's arrival to its first token sent, and from the
// first to the last token over the tokens between), so tools written against vLLM read
// ours unchanged.
// Threads: every member is safe from any thread (atomics, never blocks).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "bench/llm/serve/latency_histogram.h"

namespace chaosbench::bench::llm {

class LlmServerMetrics {
 public:
  void add_prompt_tokens(std::uint64_t n) { prompt_tokens_.fetch_add(n); }
  void add_generation_tokens(std::uint64_t n) { generation_tokens_.fetch_add(n); }
  void count_success() { successes_.fetch_add(1); }
  void count_rejected() { rejected_.fetch_add(1); }  // 429: over the running limit
  void count_cancelled() { cancelled_.fetch_add(1); }
  void observe_ttft(double seconds) { ttft_.observe(seconds); }
  void observe_tpot(double seconds) { tpot_.observe(seconds); }

  std::uint64_t generation_tokens() const { return generation_tokens_.load(); }
  std::uint64_t cancelled() const { return cancelled_.load(); }
  std::uint64_t rejected() const { return rejected_.load(); }
  const LatencyHistogram& ttft() const { return ttft_; }

  // The engine's gauges at a scrape.
  struct EngineGauges {
    std::size_t running = 0;
    std::size_t waiting = 0;
    double kv_cache_usage = 0.0;  // 0..1
    std::uint64_t preemptions = 0;
  };
  std::string prometheus(const std::string& model, const EngineGauges& engine) const;

 private:
  std::atomic<std::uint64_t> prompt_tokens_{0};
  std::atomic<std::uint64_t> generation_tokens_{0};
  std::atomic<std::uint64_t> successes_{0};
  std::atomic<std::uint64_t> rejected_{0};
  std::atomic<std::uint64_t> cancelled_{0};
  LatencyHistogram ttft_{LatencyHistogram::ttft_bounds()};
  LatencyHistogram tpot_{LatencyHistogram::tpot_bounds()};
};

}  // namespace chaosbench::bench::llm

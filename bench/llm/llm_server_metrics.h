// Counters of the built-in LLM server, exposed on GET /metrics in the Prometheus text
// format under vLLM's names (vllm:num_requests_running, vllm:num_requests_waiting,
// vllm:prompt_tokens_total, vllm:generation_tokens_total, vllm:request_success_total), so
// tools written against vLLM read ours unchanged.
// Threads: every member is safe from any thread (atomics, never blocks).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace chaosbench::bench::llm {

class LlmServerMetrics {
 public:
  void add_prompt_tokens(std::uint64_t n) { prompt_tokens_.fetch_add(n); }
  void add_generation_tokens(std::uint64_t n) { generation_tokens_.fetch_add(n); }
  void count_success() { successes_.fetch_add(1); }
  void count_rejected() { rejected_.fetch_add(1); }  // 429: over the running limit
  void count_cancelled() { cancelled_.fetch_add(1); }

  std::uint64_t generation_tokens() const { return generation_tokens_.load(); }
  std::uint64_t cancelled() const { return cancelled_.load(); }

  // The exposition text; `running` and `waiting` are the engine's gauges now.
  std::string prometheus(const std::string& model, std::size_t running, std::size_t waiting) const;

 private:
  std::atomic<std::uint64_t> prompt_tokens_{0};
  std::atomic<std::uint64_t> generation_tokens_{0};
  std::atomic<std::uint64_t> successes_{0};
  std::atomic<std::uint64_t> rejected_{0};
  std::atomic<std::uint64_t> cancelled_{0};
};

}  // namespace chaosbench::bench::llm

// What every connection of one LlmHttpServer shares: the settings, the engine, the
// counters, and the admissions (requests generating at once, bounded by max_running).
// Threads: safe from any thread (constants after start, atomics).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "bench/llm/openai_request.h"
#include "bench/llm/serve/llm_server_config.h"
#include "bench/llm/serve/llm_server_metrics.h"
#include "bench/llm/token_engine.h"

namespace chaosbench::bench::llm {

struct LlmServerShared {
  explicit LlmServerShared(const LlmServerConfig& c) : cfg(c), limits{{c.model}, c.context_tokens, c.body_limit} {}

  // One of max_running, unless all are taken. Pair a true with release().
  bool try_admit() {
    auto now = running.load();
    do {
      if (now >= cfg.max_running) return false;
    } while (!running.compare_exchange_weak(now, now + 1));
    return true;
  }
  void release() { running.fetch_sub(1); }

  const LlmServerConfig& cfg;
  RequestLimits limits;
  TokenEngine* engine = nullptr;  // set before the server starts
  LlmServerMetrics metrics;
  std::atomic<std::size_t> running{0};
  std::atomic<std::uint64_t> next_id{1};
};

}  // namespace chaosbench::bench::llm

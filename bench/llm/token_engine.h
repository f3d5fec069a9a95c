// The interface between the built-in LLM server's HTTP layer and whatever produces
// tokens (the synthetic engine, or the CPU transformer of transformer/). The server hands
// an engine an accepted CompletionRequest and a sink; the engine calls the sink with each
// token's text, then once with the finish, from its own executor.
// Threads: start(), active() and Generation::cancel() are safe from any thread and never
// block. For one generation the sink's calls never overlap and come in order; none
// begins after cancel() has taken effect on the engine's executor, so a sink must not
// assume it is called after cancel() returns, nor that it is not (one call may be in
// flight): the server's session drops late calls itself.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "bench/llm/openai_request.h"
#include "bench/llm/openai_response.h"

namespace chaosbench::bench::llm {

struct TokenSink {
  std::function<void(std::string_view text)> on_token;              // one call per token
  std::function<void(FinishReason reason, Usage usage)> on_finish;  // once, last
};

// One request being generated. Dropping the handle does not cancel it; cancel() does.
class Generation {
 public:
  virtual ~Generation() = default;
  // Stops the generation and releases its sink and its slot in active() at once (a client
  // that disconnected mid-stream). Idempotent; a no-op after the finish.
  virtual void cancel() = 0;
};

class TokenEngine {
 public:
  using Clock = std::chrono::steady_clock;
  virtual ~TokenEngine() = default;

  // Starts generating `request`, which arrived at `arrival` (an engine that models
  // latency measures from it, so time spent parsing is not added on top). nullptr: the
  // engine refuses it now (its queue is full; the server answers 429) and never calls
  // the sink.
  virtual std::shared_ptr<Generation> start(const CompletionRequest& request, Clock::time_point arrival,
                                            TokenSink sink) = 0;
  // Generations started and neither finished nor cancelled: a gauge that returns to 0.
  virtual std::size_t active() const = 0;
  // Requests accepted but not yet generating (an engine without a queue: 0).
  virtual std::size_t waiting() const { return 0; }
  // Requests in the running batch (an engine without a queue: all active ones).
  virtual std::size_t running() const { return active(); }
  // The KV cache's blocks in use, 0..1 (an engine without one: 0).
  virtual double kv_cache_usage() const { return 0.0; }
  // Sequences preempted for want of KV blocks since the start.
  virtual std::uint64_t preemptions() const { return 0; }
  // Stops generating: once it returns no sink is called again and the engine holds none.
  // The server calls it after its io threads stopped and before its io_context goes, for
  // an engine with threads of its own whose sinks post to that io_context. Idempotent.
  virtual void shutdown() {}
  // A sticky device error (gpu.xid) the engine has met, if any: every later step fails
  // until the process ends, so the worker exits and the replica can be restarted.
  virtual std::optional<std::string> device_lost() const { return std::nullopt; }
};

}  // namespace chaosbench::bench::llm

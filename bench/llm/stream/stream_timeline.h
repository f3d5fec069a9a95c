// Records one streamed LLM request as it happens (scheduled send, first byte, each chunk
// and how many tokens it carried, the usage field, the end or the failure) and turns it
// into a StreamTiming (stream_timing.h, where every definition is stated and sourced).
// One thread at a time: the connection that owns the request.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/llm/stream/stream_timing.h"

namespace chaosbench::bench::llm {

class StreamTimeline {
 public:
  using Clock = std::chrono::steady_clock;

  // `prompt_tokens`: the length the request was built with, used when the server sends
  // no usage. Latencies are measured from `scheduled`, never from the actual send.
  StreamTimeline(Clock::time_point scheduled, std::int64_t prompt_tokens);

  void sent(Clock::time_point at);        // only the first call counts
  void first_byte(Clock::time_point at);  // only the first call counts
  // One chunk (SSE event) arrived carrying `tokens` tokens (0 for a role-only or
  // usage-only event; negative counts are taken as 0). Also counts as the first byte.
  void chunk(Clock::time_point at, std::int64_t tokens);
  // The server's usage field; a later call replaces an earlier one. Negative values are
  // ignored (each field separately), so a partial usage object keeps what it lacks.
  void usage(std::optional<std::int64_t> prompt_tokens, std::optional<std::int64_t> completion_tokens);
  // The stream ended as the protocol says. Ignored after finish() or fail().
  void finish(Clock::time_point at);
  // The request failed; `failure` must not be kNone. Ignored after finish() or fail(),
  // so the first reason stands.
  void fail(Clock::time_point at, StreamFailure failure, std::string detail = {});

  bool ended() const { return end_.has_value(); }
  // The timing so far. Before the end, e2e runs to the last token chunk (or is 0).
  StreamTiming timing() const;

 private:
  struct Chunk {
    Clock::time_point at;
    std::int64_t tokens;
  };

  Clock::time_point scheduled_;
  std::int64_t prompt_tokens_;
  std::optional<Clock::time_point> sent_, first_byte_, end_;
  std::vector<Chunk> token_chunks_;  // only chunks with tokens > 0
  std::optional<std::int64_t> usage_prompt_, usage_completion_;
  StreamFailure failure_ = StreamFailure::kNone;
  std::string failure_detail_;
};

}  // namespace chaosbench::bench::llm

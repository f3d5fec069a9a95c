// The state of one OpenAI-compatible streaming answer, folded from its SSE
// events: how many carried text, whether [DONE] came, the last usage and finish
// reason, the first error, and how many events were malformed or came after
// [DONE]. The caller times the events; this only reads them. Not thread-safe;
// one per request.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "bench/llm/stream/openai_chunk.h"
#include "bench/llm/stream/sse_event.h"

namespace chaosbench::bench::llm {

class OpenAiStream {
 public:
  explicit OpenAiStream(OpenAiEndpoint endpoint) : endpoint_(endpoint) {}

  // Reads one event and returns what it was (valid until the next call). An
  // event after [DONE] is not parsed: it is counted in late_events() and
  // returned as kMalformed.
  const OpenAiChunk &on_event(const SseEvent &event);

  bool done() const { return done_; }
  // The first error object the server sent; empty when none.
  const std::optional<std::string> &error() const { return error_; }
  std::uint64_t events() const { return events_; }
  std::uint64_t text_chunks() const { return text_chunks_; }
  std::uint64_t text_bytes() const { return text_bytes_; }
  std::uint64_t malformed() const { return malformed_; }
  std::uint64_t late_events() const { return late_events_; }
  // The last values seen: servers that report usage on every chunk grow them.
  std::optional<std::uint64_t> prompt_tokens() const { return prompt_tokens_; }
  std::optional<std::uint64_t> completion_tokens() const { return completion_tokens_; }
  const std::optional<std::string> &finish_reason() const { return finish_reason_; }

 private:
  OpenAiEndpoint endpoint_;
  OpenAiChunk last_;
  bool done_ = false;
  std::optional<std::string> error_;
  std::uint64_t events_ = 0;
  std::uint64_t text_chunks_ = 0;
  std::uint64_t text_bytes_ = 0;
  std::uint64_t malformed_ = 0;
  std::uint64_t late_events_ = 0;
  std::optional<std::uint64_t> prompt_tokens_;
  std::optional<std::uint64_t> completion_tokens_;
  std::optional<std::string> finish_reason_;
};

}  // namespace chaosbench::bench::llm

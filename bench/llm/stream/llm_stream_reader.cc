#include "bench/llm/stream/llm_stream_reader.h"

#include <fmt/format.h>

#include <optional>

#include "bench/llm/stream/openai_chunk.h"

namespace chaosbench::bench::llm {
namespace {

std::optional<std::int64_t> as_signed(std::optional<std::uint64_t> v) {
  if (!v) return std::nullopt;
  return static_cast<std::int64_t>(*v);
}

}  // namespace

LlmStreamReader::LlmStreamReader(OpenAiEndpoint api, bool stream, Clock::time_point scheduled,
                                 std::int64_t prompt_tokens)
    : api_(api), stream_(stream), timeline_(scheduled, prompt_tokens), events_(api) {}

bool LlmStreamReader::on_head(int status, Clock::time_point at) {
  if (!ended_ && (status < 200 || status > 299)) end(at, StreamFailure::kHttpStatus, fmt::format("HTTP {}", status));
  return !ended_;
}

bool LlmStreamReader::on_body(std::string_view piece, Clock::time_point at) {
  if (ended_) return false;
  if (!stream_) {
    body_.append(piece);
    return true;
  }
  const bool ok = sse_.feed(piece, [&](const SseEvent& e) {
    if (!ended_) on_event(e, at);
  });
  if (!ok && !ended_) end(at, StreamFailure::kMalformed, "server-sent event past its size bound");
  return !ended_;
}

void LlmStreamReader::on_event(const SseEvent& event, Clock::time_point at) {
  const OpenAiChunk& c = events_.on_event(event);
  switch (c.kind) {
    case OpenAiChunk::Kind::kChunk:
      timeline_.chunk(at, c.has_text() ? 1 : 0);
      if (c.prompt_tokens || c.completion_tokens) timeline_.usage(as_signed(c.prompt_tokens), as_signed(c.completion_tokens));
      break;
    case OpenAiChunk::Kind::kDone: break;  // the response's end completes the request
    case OpenAiChunk::Kind::kError: end(at, StreamFailure::kHttpStatus, "error event: " + c.message); break;
    case OpenAiChunk::Kind::kMalformed:
      if (events_.late_events() > 0) break;  // after [DONE]: counted by the stream, harmless
      end(at, StreamFailure::kMalformed, fmt::format("bad JSON in event {}: {}", events_.events(), c.message));
      break;
  }
}

void LlmStreamReader::on_complete(Clock::time_point at) {
  if (ended_) return;
  if (!stream_) return on_whole_body(at);
  if (!events_.done()) return end(at, StreamFailure::kTruncated, "the stream ended without [DONE]");
  end(at, StreamFailure::kNone, {});
}

void LlmStreamReader::on_whole_body(Clock::time_point at) {
  const OpenAiChunk c = parse_openai_chunk(body_, api_);
  if (c.kind == OpenAiChunk::Kind::kError) return end(at, StreamFailure::kHttpStatus, "error body: " + c.message);
  if (c.kind != OpenAiChunk::Kind::kChunk) return end(at, StreamFailure::kMalformed, "bad JSON body: " + c.message);
  // The whole answer arrives at once: it is the first and the last "chunk".
  const bool has_output = c.completion_tokens ? *c.completion_tokens > 0 : true;
  timeline_.chunk(at, has_output ? 1 : 0);
  timeline_.usage(as_signed(c.prompt_tokens), as_signed(c.completion_tokens));
  end(at, StreamFailure::kNone, {});
}

void LlmStreamReader::fail(Clock::time_point at, StreamFailure failure, std::string detail) {
  if (!ended_) end(at, failure, std::move(detail));
}

void LlmStreamReader::end(Clock::time_point at, StreamFailure failure, std::string detail) {
  ended_ = true;
  if (failure != StreamFailure::kNone) timeline_.fail(at, failure, std::move(detail));
  else timeline_.finish(at);
}

}  // namespace chaosbench::bench::llm

#include "bench/llm/stream/llm_stream_reader.h"

#include <fmt/format.h>

#include <optional>

#include "bench/llm/stream/openai_chunk.h"

namespace chaosbench::bench::llm {
namespace {

// Bounds against a hostile server: a streamed answer's decoded body, and a whole one.
http::HttpResponseReader::Limits limits() {
  http::HttpResponseReader::Limits l;
  l.max_body = 64ull << 20;
  return l;
}

std::optional<std::int64_t> as_signed(std::optional<std::uint64_t> v) {
  if (!v) return std::nullopt;
  return static_cast<std::int64_t>(*v);
}

}  // namespace

LlmStreamReader::LlmStreamReader(OpenAiEndpoint api, bool stream, Clock::time_point scheduled,
                                 std::int64_t prompt_tokens)
    : api_(api), stream_(stream), timeline_(scheduled, prompt_tokens), http_(limits()), events_(api) {}

bool LlmStreamReader::on_bytes(std::string_view bytes, Clock::time_point at) {
  if (ended_) {
    extra_bytes_ = extra_bytes_ || !bytes.empty();
    return true;
  }
  if (!bytes.empty() && !any_byte_) {
    any_byte_ = true;
    timeline_.first_byte(at);
  }
  while (!bytes.empty() && !ended_) {
    const auto step = http_.step(bytes);
    bytes.remove_prefix(step.consumed);
    if (!head_seen_ && http_.head_done()) {
      head_seen_ = true;
      on_head(at);
    }
    if (!step.body.empty() && !ended_) on_body(step.body, at);
    if (ended_) break;
    if (http_.state() == http::HttpResponseReader::State::kComplete) {
      on_complete(at);
    } else if (http_.state() == http::HttpResponseReader::State::kError) {
      const bool cut = http_.error() == http::HttpResponseReader::Error::kTruncated;
      end(at, cut ? StreamFailure::kTruncated : StreamFailure::kMalformed, to_string(http_.error()));
    }
  }
  if (ended_ && !bytes.empty()) extra_bytes_ = true;
  return ended_;
}

void LlmStreamReader::on_head(Clock::time_point at) {
  const int status = http_.status();
  if (status < 200 || status > 299) end(at, StreamFailure::kHttpStatus, fmt::format("HTTP {}", status));
}

void LlmStreamReader::on_body(std::string_view body, Clock::time_point at) {
  if (!stream_) {
    body_.append(body);
    return;
  }
  const bool ok = sse_.feed(body, [&](const SseEvent& e) {
    if (!ended_) on_event(e, at);
  });
  if (!ok && !ended_) end(at, StreamFailure::kMalformed, "server-sent event past its size bound");
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

bool LlmStreamReader::on_eof(Clock::time_point at) {
  if (ended_) return true;
  if (http_.finish_at_eof() == http::HttpResponseReader::State::kComplete) {
    on_complete(at);
  } else {
    end(at, any_byte_ ? StreamFailure::kTruncated : StreamFailure::kConnect,
        any_byte_ ? "the connection closed mid-answer" : "the connection closed before an answer");
  }
  return true;
}

void LlmStreamReader::fail(Clock::time_point at, StreamFailure failure, std::string detail) {
  if (!ended_) end(at, failure, std::move(detail));
}

void LlmStreamReader::end(Clock::time_point at, StreamFailure failure, std::string detail) {
  ended_ = true;
  failed_ = failure != StreamFailure::kNone;
  if (failed_) timeline_.fail(at, failure, std::move(detail));
  else timeline_.finish(at);
}

bool LlmStreamReader::reusable() const {
  return ended_ && !failed_ && !extra_bytes_ && http_.state() == http::HttpResponseReader::State::kComplete &&
         http_.keep_alive();
}

}  // namespace chaosbench::bench::llm

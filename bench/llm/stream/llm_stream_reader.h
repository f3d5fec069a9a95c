// Reads one OpenAI-compatible answer as its bytes arrive, for the LLM load generator:
// HTTP/1.1 framing (bench/http/http_response_reader.h), then either Server-Sent Events folded into an
// OpenAiStream (stream: true) or one JSON body (stream: false), into a StreamTimeline
// timed with the moment each read returned. It owns no socket: the connection
// (llm_connection.h) feeds it and asks whether the exchange ended and how.
//
// Outcomes, each a StreamFailure (stream_timing.h), never an exception:
//   completed   the HTTP response ended and, when streaming, [DONE] came first
//   http_status a non-2xx status, or an error object from the server (as an event or body)
//   malformed   bad HTTP framing, an SSE stream past its bounds, a JSON chunk or body that
//               does not parse
//   truncated   the connection ended inside the response, or a stream ended without [DONE]
// Streaming counts one token per text-carrying event (the server's usage, when it sends
// one, replaces the total). Not streaming: TTFT = e2e, tokens from usage.
// Not thread-safe: one reader per request, used by the loop thread that owns it.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "bench/http/http_response_reader.h"
#include "bench/llm/openai_endpoint.h"
#include "bench/llm/stream/openai_stream.h"
#include "bench/llm/stream/sse_parser.h"
#include "bench/llm/stream/stream_timeline.h"

namespace chaosbench::bench::llm {

class LlmStreamReader {
 public:
  using Clock = std::chrono::steady_clock;

  LlmStreamReader(OpenAiEndpoint api, bool stream, Clock::time_point scheduled, std::int64_t prompt_tokens);

  void sent(Clock::time_point at) { timeline_.sent(at); }
  // The next bytes of the connection, read at `at`. Returns ended(). Bytes after the end
  // of the response are ignored (and make the connection not reusable).
  bool on_bytes(std::string_view bytes, Clock::time_point at);
  // The peer closed the connection at `at`. Returns ended() (always true afterwards).
  bool on_eof(Clock::time_point at);
  // Ends the exchange with `failure` (timeout, cancelled, connect); ignored once ended.
  void fail(Clock::time_point at, StreamFailure failure, std::string detail = {});

  bool ended() const { return ended_; }
  bool any_byte() const { return any_byte_; }
  // Whether the connection may carry the next request: the response completed, the server
  // allows keep-alive and nothing followed it.
  bool reusable() const;
  StreamTiming timing() const { return timeline_.timing(); }

 private:
  void on_head(Clock::time_point at);
  void on_body(std::string_view body, Clock::time_point at);
  void on_event(const SseEvent& event, Clock::time_point at);
  void on_complete(Clock::time_point at);
  void on_whole_body(Clock::time_point at);
  void end(Clock::time_point at, StreamFailure failure, std::string detail);

  OpenAiEndpoint api_;
  bool stream_;
  StreamTimeline timeline_;
  http::HttpResponseReader http_;
  SseParser sse_;
  OpenAiStream events_;
  std::string body_;  // not streaming: the whole answer
  bool head_seen_ = false;
  bool any_byte_ = false;
  bool extra_bytes_ = false;
  bool ended_ = false;
  bool failed_ = false;
};

}  // namespace chaosbench::bench::llm

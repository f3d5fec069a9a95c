// Reads one OpenAI-compatible answer as its parts arrive, for the LLM load generator: the
// HTTP head's status, then the body either as Server-Sent Events folded into an
// OpenAiStream (stream: true) or as one JSON body (stream: false), into a StreamTimeline
// timed with the moment each read returned. It owns no socket and no HTTP framing: the
// HTTP client core (bench/http/http_client_connection.h) parses the response and feeds
// it the head and each decoded body piece, and says how the response ended.
//
// Outcomes, each a StreamFailure (stream_timing.h), never an exception:
//   completed   the HTTP response ended and, when streaming, [DONE] came first
//   http_status a non-2xx status, or an error object from the server (as an event or body)
//   malformed   an SSE stream past its bounds, a JSON chunk or body that does not parse
//               (bad HTTP framing is the connection's to find, reported through fail())
//   truncated   a stream ended without [DONE] (a cut connection: through fail())
// Streaming counts one token per text-carrying event (the server's usage, when it sends
// one, replaces the total). Not streaming: TTFT = e2e, tokens from usage.
// Not thread-safe: one reader per request, used by the loop thread that owns it.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

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
  void first_byte(Clock::time_point at) { timeline_.first_byte(at); }
  // The response's status, its head read at `at`. Returns false when that ended the
  // exchange (a non-2xx status): the rest of the answer is not wanted.
  bool on_head(int status, Clock::time_point at);
  // The next piece of the decoded body, read at `at`. Returns false when the exchange
  // ended (an error event, a malformed event, an event past its bound).
  bool on_body(std::string_view piece, Clock::time_point at);
  // The HTTP response ended well at `at`: completes the exchange or finds it truncated.
  void on_complete(Clock::time_point at);
  // Ends the exchange with `failure` (connect, timeout, cancelled, a cut or malformed
  // response); ignored once ended.
  void fail(Clock::time_point at, StreamFailure failure, std::string detail = {});

  bool ended() const { return ended_; }
  StreamTiming timing() const { return timeline_.timing(); }

 private:
  void on_event(const SseEvent& event, Clock::time_point at);
  void on_whole_body(Clock::time_point at);
  void end(Clock::time_point at, StreamFailure failure, std::string detail);

  OpenAiEndpoint api_;
  bool stream_;
  StreamTimeline timeline_;
  SseParser sse_;
  OpenAiStream events_;
  std::string body_;  // not streaming: the whole answer (bounded by the connection's body limit)
  bool ended_ = false;
};

}  // namespace chaosbench::bench::llm

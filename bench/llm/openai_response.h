// What the built-in LLM server sends back in the OpenAI format: server-sent events for a
// streamed completion (one chunk per token, the last with its finish_reason, a usage
// chunk when asked, then "data: [DONE]"), or one JSON answer when not streamed.
// Chat chunks carry `choices[0].delta` (the first with the role), completion chunks
// `choices[0].text`.
// Threads: a ResponseWriter belongs to one request; the functions are pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "bench/llm/openai_request.h"

namespace chaosbench::bench::llm {

// kError: the engine failed mid-answer (an injected device fault): the server answers an
// error object, not a finish reason (vLLM sends `data: {"error": ...}` mid-stream).
enum class FinishReason { kStop, kLength, kError };
std::string_view to_string(FinishReason r);  // "stop", "length", "error"

struct Usage {
  int prompt_tokens = 0;
  int completion_tokens = 0;
};

class ResponseWriter {
 public:
  // `id` is unique per request ("cmpl-<n>" / "chatcmpl-<n>" is made from it); `created`
  // is the Unix time the request was taken.
  ResponseWriter(OpenAiEndpoint endpoint, std::string model, std::uint64_t id, std::int64_t created);

  // Streaming: one SSE event ("data: {...}\n\n") per piece of text.
  std::string token_event(std::string_view text);
  // The last content event: no text, `finish_reason` set.
  std::string finish_event(FinishReason reason) const;
  // stream_options.include_usage: `choices` empty, `usage` set.
  std::string usage_event(const Usage& usage) const;
  static std::string done_event() { return "data: [DONE]\n\n"; }

  // Not streaming: the whole answer.
  std::string whole(std::string_view text, FinishReason reason, const Usage& usage) const;

  const std::string& id() const { return id_; }

 private:
  std::string chunk(std::string_view text, const char* finish) const;

  OpenAiEndpoint endpoint_;
  std::string model_;
  std::string id_;
  std::int64_t created_;
  bool role_sent_ = false;  // chat: the first delta carries {"role": "assistant"}
};

}  // namespace chaosbench::bench::llm

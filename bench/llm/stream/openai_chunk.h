// One event of an OpenAI-compatible streaming answer (/v1/completions or
// /v1/chat/completions with "stream": true), read from its SSE data: a JSON
// chunk, the "[DONE]" sentinel, an error object, or something malformed. A pure
// function of the event; bad JSON is kMalformed, for the caller to count, never
// an exception.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "bench/llm/openai_endpoint.h"

namespace chaosbench::bench::llm {

struct OpenAiChunk {
  enum class Kind {
    kChunk,      // a JSON chunk: text, finish reason, usage, any of them or none
    kDone,       // data: [DONE], the end of the stream
    kError,      // {"error": {...}} (or vLLM's {"object": "error", ...}), or event:
                 // error
    kMalformed,  // not JSON, too deep, not an object, or fields of the wrong
                 // type
  };
  Kind kind = Kind::kMalformed;
  // choices[0].text (completions) or choices[0].delta.content (chat); empty
  // when absent or null (a role-only first delta, a usage-only last chunk).
  std::string text;
  std::optional<std::string> finish_reason;  // choices[0].finish_reason when a string
  // usage.prompt_tokens and usage.completion_tokens when usage is an object
  // that has them.
  std::optional<std::uint64_t> prompt_tokens;
  std::optional<std::uint64_t> completion_tokens;
  // kError: the server's message (error.message, or the top-level message);
  // kMalformed: why, never quoting the input.
  std::string message;

  // Whether this chunk carries generated text: what a token-level client times.
  bool has_text() const { return kind == Kind::kChunk && !text.empty(); }
};

// `data` is the SSE event's data, `event_type` its type ("message" unless the
// server named it). Throws nothing but std::bad_alloc.
OpenAiChunk parse_openai_chunk(std::string_view data, OpenAiEndpoint endpoint, std::string_view event_type = "message");

}  // namespace chaosbench::bench::llm

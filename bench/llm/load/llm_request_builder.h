// Builds the HTTP/1.1 requests the LLM load generator sends to an OpenAI-compatible
// server: POST /v1/completions {"prompt"} or /v1/chat/completions {"messages": [one user
// turn]}, with model, max_tokens, temperature 0, stream, and when streaming
// stream_options.include_usage (so the last event carries the server's token counts, as
// vLLM's benchmark_serving asks), and ignore_eos when set (vLLM's extension: exactly
// max_tokens tokens). Pure functions.
#pragma once

#include <string>

#include "bench/llm/openai_endpoint.h"
#include "bench/llm/load/token_dataset.h"

namespace chaosbench::bench::llm {

struct LlmRequestShape {
  OpenAiEndpoint api = OpenAiEndpoint::kCompletions;
  bool stream = true;
  bool ignore_eos = true;
  std::string model;
  std::string host;  // the Host header, "host:port"
};

// The JSON body for `request`.
std::string llm_request_body(const LlmRequestShape& shape, const LlmRequest& request);
// The whole HTTP request: head and body.
std::string llm_http_request(const LlmRequestShape& shape, const LlmRequest& request);

}  // namespace chaosbench::bench::llm

// The OpenAI-compatible request bodies the built-in LLM server takes (POST
// /v1/completions and /v1/chat/completions), parsed and checked, and the API's error
// object for what is wrong. Prompts are text for a byte-level tokenizer (one byte, one
// token), so a prompt's token count is its length in bytes; a chat's messages become one
// prompt through a fixed template (chat_prompt).
// Pure functions: thread-safe; bad input is a value (OpenAiError), never an exception.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/llm/openai_endpoint.h"

namespace chaosbench::bench::llm {


struct ChatMessage {
  std::string role;  // "system", "user", "assistant" (or "developer", "tool": kept as given)
  std::string content;
};

struct CompletionRequest {
  OpenAiEndpoint endpoint = OpenAiEndpoint::kCompletions;
  std::string model;
  std::string prompt;                 // completions: the prompt; chat: chat_prompt(messages)
  std::vector<ChatMessage> messages;  // chat only
  int max_tokens = 16;                // OpenAI's completions default; chat: up to the context
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage: a last chunk with usage
  bool ignore_eos = false;     // vLLM's extension: generate exactly max_tokens
  double temperature = 1.0;    // 0: greedy
  double top_p = 1.0;
  std::optional<std::uint64_t> seed;
};

// The API's error object and the HTTP status it goes with:
// {"error": {"message": ..., "type": ..., "param": ..., "code": ...}}.
struct OpenAiError {
  int status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  std::string param;  // "" -> null
  std::string code;   // "" -> null
  std::string json() const;
};

// What the server accepts: its model names and its context length in tokens (prompt +
// max_tokens must fit; OpenAI's "context_length_exceeded").
struct RequestLimits {
  std::vector<std::string> models;
  int context_tokens = 2048;
  std::size_t max_body = 4u << 20;  // larger bodies: 413 before parsing
};

// Parses and checks a request body for `endpoint`. Unknown model: 404 model_not_found;
// malformed JSON, a wrong type, an unsupported value (n > 1), an oversize prompt: 400
// with the offending parameter named.
struct ParsedRequest {
  std::optional<CompletionRequest> request;
  std::optional<OpenAiError> error;
};
ParsedRequest parse_request(OpenAiEndpoint endpoint, std::string_view body, const RequestLimits& limits);

// The chat template for the byte-level model: "<role>: <content>\n" per message, then
// "assistant: ". Fixed, so a prompt's token count is known to the client too.
std::string chat_prompt(const std::vector<ChatMessage>& messages);

}  // namespace chaosbench::bench::llm

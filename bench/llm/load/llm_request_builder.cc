#include "bench/llm/load/llm_request_builder.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace chaosbench::bench::llm {

std::string llm_request_body(const LlmRequestShape& shape, const LlmRequest& request) {
  nlohmann::json body{{"model", shape.model}, {"max_tokens", request.max_tokens}, {"temperature", 0},
                      {"stream", shape.stream}};
  if (shape.api == OpenAiEndpoint::kChatCompletions)
    body["messages"] = nlohmann::json::array({{{"role", "user"}, {"content", request.prompt}}});
  else
    body["prompt"] = request.prompt;
  if (shape.stream) body["stream_options"] = {{"include_usage", true}};
  if (shape.ignore_eos) body["ignore_eos"] = true;
  // Prompts from a file may hold invalid UTF-8: replaced, not thrown on.
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string llm_http_request(const LlmRequestShape& shape, const LlmRequest& request) {
  const std::string body = llm_request_body(shape, request);
  const char* path = shape.api == OpenAiEndpoint::kChatCompletions ? "/v1/chat/completions" : "/v1/completions";
  return fmt::format("POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: {}\r\n"
                     "Content-Length: {}\r\n\r\n{}",
                     path, shape.host, shape.stream ? "text/event-stream" : "application/json", body.size(), body);
}

}  // namespace chaosbench::bench::llm

// OpenAI response chunks and answers. See openai_response.h.
#include "bench/llm/openai_response.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace chaosbench::bench::llm {
namespace {

using json = nlohmann::json;

// Model output is bytes; a byte-level model may cut a UTF-8 sequence between tokens, so
// invalid sequences are replaced (U+FFFD) rather than thrown on.
std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string sse(const json& j) { return "data: " + dump(j) + "\n\n"; }

json usage_json(const Usage& u) {
  return {{"prompt_tokens", u.prompt_tokens},
          {"completion_tokens", u.completion_tokens},
          {"total_tokens", u.prompt_tokens + u.completion_tokens}};
}

}  // namespace

std::string_view to_string(FinishReason r) {
  return r == FinishReason::kLength ? "length" : r == FinishReason::kError ? "error" : "stop";
}

ResponseWriter::ResponseWriter(OpenAiEndpoint endpoint, std::string model, std::uint64_t id, std::int64_t created)
    : endpoint_(endpoint), model_(std::move(model)),
      id_(fmt::format("{}-{:016x}", endpoint == OpenAiEndpoint::kChatCompletions ? "chatcmpl" : "cmpl", id)), created_(created) {}

std::string ResponseWriter::chunk(std::string_view text, const char* finish) const {
  json choice = {{"index", 0}, {"logprobs", nullptr}, {"finish_reason", finish ? json(finish) : json(nullptr)}};
  if (endpoint_ == OpenAiEndpoint::kChatCompletions) {
    json delta = json::object();
    if (!role_sent_) delta["role"] = "assistant";
    if (!finish) delta["content"] = std::string(text);
    choice["delta"] = std::move(delta);
  } else {
    choice["text"] = std::string(text);
  }
  return sse({{"id", id_},
              {"object", endpoint_ == OpenAiEndpoint::kChatCompletions ? "chat.completion.chunk" : "text_completion"},
              {"created", created_},
              {"model", model_},
              {"choices", json::array({std::move(choice)})}});
}

std::string ResponseWriter::token_event(std::string_view text) {
  std::string out = chunk(text, nullptr);
  role_sent_ = true;
  return out;
}

std::string ResponseWriter::finish_event(FinishReason reason) const {
  return chunk("", std::string(to_string(reason)).c_str());
}

std::string ResponseWriter::usage_event(const Usage& usage) const {
  return sse({{"id", id_},
              {"object", endpoint_ == OpenAiEndpoint::kChatCompletions ? "chat.completion.chunk" : "text_completion"},
              {"created", created_},
              {"model", model_},
              {"choices", json::array()},
              {"usage", usage_json(usage)}});
}

std::string ResponseWriter::whole(std::string_view text, FinishReason reason, const Usage& usage) const {
  json choice = {{"index", 0}, {"logprobs", nullptr}, {"finish_reason", std::string(to_string(reason))}};
  if (endpoint_ == OpenAiEndpoint::kChatCompletions) choice["message"] = {{"role", "assistant"}, {"content", std::string(text)}};
  else choice["text"] = std::string(text);
  return dump({{"id", id_},
               {"object", endpoint_ == OpenAiEndpoint::kChatCompletions ? "chat.completion" : "text_completion"},
               {"created", created_},
               {"model", model_},
               {"choices", json::array({std::move(choice)})},
               {"usage", usage_json(usage)}});
}

}  // namespace chaosbench::bench::llm

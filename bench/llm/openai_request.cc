// Request parsing for the OpenAI-compatible endpoints. See openai_request.h.
#include "bench/llm/openai_request.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/json/json_limits.h"

namespace chaosbench::bench::llm {
namespace {

using json = nlohmann::json;

OpenAiError bad(std::string message, std::string param, std::string code = "") {
  return OpenAiError{400, std::move(message), "invalid_request_error", std::move(param), std::move(code)};
}

std::string describe(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::string: return "a string";
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
    default: return "a number";
  }
}

// Reads the optional fields both endpoints share; the first problem wins.
std::optional<OpenAiError> read_common(const json& doc, CompletionRequest& r) {
  if (auto it = doc.find("stream"); it != doc.end() && !it->is_null()) {
    if (!it->is_boolean()) return bad("'stream' must be a boolean, got " + describe(*it), "stream");
    r.stream = it->get<bool>();
  }
  if (auto it = doc.find("stream_options"); it != doc.end() && !it->is_null()) {
    if (!it->is_object()) return bad("'stream_options' must be an object", "stream_options");
    if (!r.stream) return bad("'stream_options' is only allowed when 'stream' is true", "stream_options");
    if (auto u = it->find("include_usage"); u != it->end()) {
      if (!u->is_boolean()) return bad("'stream_options.include_usage' must be a boolean", "stream_options.include_usage");
      r.include_usage = u->get<bool>();
    }
  }
  if (auto it = doc.find("ignore_eos"); it != doc.end() && !it->is_null()) {
    if (!it->is_boolean()) return bad("'ignore_eos' must be a boolean", "ignore_eos");
    r.ignore_eos = it->get<bool>();
  }
  for (auto [name, field, lo, hi] : {std::tuple{"temperature", &r.temperature, 0.0, 2.0}, std::tuple{"top_p", &r.top_p, 0.0, 1.0}}) {
    auto it = doc.find(name);
    if (it == doc.end() || it->is_null()) continue;
    if (!it->is_number() || it->get<double>() < lo || it->get<double>() > hi)
      return bad(fmt::format("'{}' must be a number from {} to {}", name, lo, hi), name);
    *field = it->get<double>();
  }
  if (auto it = doc.find("seed"); it != doc.end() && !it->is_null()) {
    if (!it->is_number_integer()) return bad("'seed' must be an integer", "seed");
    r.seed = static_cast<std::uint64_t>(it->get<std::int64_t>());
  }
  if (auto it = doc.find("n"); it != doc.end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<std::int64_t>() != 1) return bad("only 'n': 1 is supported", "n");
  }
  return std::nullopt;
}

// max_tokens (or chat's max_completion_tokens), checked against the context length.
std::optional<OpenAiError> read_max_tokens(const json& doc, CompletionRequest& r, const RequestLimits& limits) {
  const int prompt_tokens = static_cast<int>(std::min<std::size_t>(r.prompt.size(), 1u << 30));
  const char* name = "max_tokens";
  auto it = doc.find(name);
  if ((it == doc.end() || it->is_null()) && r.endpoint == OpenAiEndpoint::kChatCompletions) {
    name = "max_completion_tokens";
    it = doc.find(name);
  }
  if (it != doc.end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<std::int64_t>() < 1 || it->get<std::int64_t>() > (1 << 30))
      return bad(fmt::format("'{}' must be a positive integer", name), name);
    r.max_tokens = static_cast<int>(it->get<std::int64_t>());
  } else if (r.endpoint == OpenAiEndpoint::kChatCompletions) {
    r.max_tokens = std::max(1, limits.context_tokens - prompt_tokens);  // as much as fits
  }
  if (prompt_tokens + r.max_tokens > limits.context_tokens)
    return bad(fmt::format("This model's maximum context length is {} tokens. However, you requested {} tokens ({} in "
                           "the prompt, {} for the completion). Please reduce the prompt or the completion length.",
                           limits.context_tokens, prompt_tokens + r.max_tokens, prompt_tokens, r.max_tokens),
               r.endpoint == OpenAiEndpoint::kChatCompletions ? "messages" : "prompt", "context_length_exceeded");
  return std::nullopt;
}

std::optional<OpenAiError> read_prompt(const json& doc, CompletionRequest& r) {
  if (r.endpoint == OpenAiEndpoint::kCompletions) {
    auto it = doc.find("prompt");
    if (it == doc.end()) return bad("'prompt' is required", "prompt");
    const json* p = &*it;
    if (p->is_array() && p->size() == 1) p = &p->front();  // ["text"]: one prompt
    if (!p->is_string()) return bad("'prompt' must be a string (or an array of one string)", "prompt");
    r.prompt = p->get<std::string>();
    return std::nullopt;
  }
  auto it = doc.find("messages");
  if (it == doc.end() || !it->is_array() || it->empty()) return bad("'messages' must be a non-empty array", "messages");
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& m = (*it)[i];
    const std::string at = fmt::format("messages[{}]", i);
    if (!m.is_object()) return bad(at + " must be an object", at);
    auto role = m.find("role");
    auto content = m.find("content");
    if (role == m.end() || !role->is_string()) return bad(at + ".role must be a string", at + ".role");
    if (content == m.end() || !content->is_string()) return bad(at + ".content must be a string", at + ".content");
    r.messages.push_back({role->get<std::string>(), content->get<std::string>()});
  }
  r.prompt = chat_prompt(r.messages);
  return std::nullopt;
}

}  // namespace

std::string OpenAiError::json() const {
  nlohmann::json e = {{"message", message},
                      {"type", type},
                      {"param", param.empty() ? nlohmann::json(nullptr) : nlohmann::json(param)},
                      {"code", code.empty() ? nlohmann::json(nullptr) : nlohmann::json(code)}};
  // Invalid UTF-8 (echoed from a hostile body) is replaced, never a throw.
  return nlohmann::json{{"error", e}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string chat_prompt(const std::vector<ChatMessage>& messages) {
  std::string out;
  for (const auto& m : messages) out += m.role + ": " + m.content + "\n";
  return out + "assistant: ";
}

ParsedRequest parse_request(OpenAiEndpoint endpoint, std::string_view body, const RequestLimits& limits) {
  if (body.size() > limits.max_body)
    return {std::nullopt, OpenAiError{413, fmt::format("the request body is larger than {} bytes", limits.max_body),
                                      "invalid_request_error", "", ""}};
  // Nesting is bounded before parsing (common/json/json_limits.h): the body is a stranger's.
  const json doc = common::parse_json_bounded(body);
  if (doc.is_discarded() || !doc.is_object())
    return {std::nullopt, bad("the body must be a JSON object (it could not be parsed as one)", "")};
  CompletionRequest r;
  r.endpoint = endpoint;
  auto model = doc.find("model");
  if (model == doc.end() || !model->is_string()) return {std::nullopt, bad("'model' must be a string", "model")};
  r.model = model->get<std::string>();
  if (std::find(limits.models.begin(), limits.models.end(), r.model) == limits.models.end())
    return {std::nullopt, OpenAiError{404, fmt::format("The model '{}' does not exist", r.model), "invalid_request_error",
                                      "model", "model_not_found"}};
  if (auto e = read_prompt(doc, r)) return {std::nullopt, std::move(e)};
  if (auto e = read_common(doc, r)) return {std::nullopt, std::move(e)};
  if (auto e = read_max_tokens(doc, r, limits)) return {std::nullopt, std::move(e)};
  return {std::move(r), std::nullopt};
}

}  // namespace chaosbench::bench::llm

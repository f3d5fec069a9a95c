// LlmHandler: routes, admission and the error objects. See llm_handler.h.
#include "bench/llm/serve/llm_handler.h"

#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "bench/llm/serve/llm_completion.h"

namespace chaosbench::bench::llm {
namespace {

std::string_view llm_path_of(std::string_view target) { return target.substr(0, target.find('?')); }

OpenAiError llm_error(int status, std::string message, std::string type, std::string code = {}) {
  OpenAiError e;
  e.status = status;
  e.message = std::move(message);
  e.type = std::move(type);
  e.code = std::move(code);
  return e;
}

http::ServerResponse llm_error_response(const OpenAiError& error) { return {error.status, "application/json", error.json()}; }

}  // namespace

http::ServerResponse LlmHandler::transport_error(int status, const std::string& message) {
  return llm_error_response(llm_error(status, message, status >= 500 ? "server_error" : "invalid_request_error"));
}

void LlmHandler::handle(http::ServerRequest request, const http::ServerExchange& exchange) {
  const std::string path(llm_path_of(request.target));
  const bool get = request.method == "GET";
  const bool post = request.method == "POST";
  auto wrong_method = [&](const char* allowed) {
    exchange.respond(llm_error_response(
        llm_error(405, fmt::format("{} {}: method not allowed (use {})", request.method, path, allowed),
                  "invalid_request_error", "method_not_allowed")));
  };
  if (path == "/v1/completions" || path == "/v1/chat/completions") {
    if (!post) return wrong_method("POST");
    return completion(path == "/v1/completions" ? OpenAiEndpoint::kCompletions : OpenAiEndpoint::kChatCompletions,
                      request, exchange);
  }
  if (path == "/health") return get ? exchange.respond({200, "text/plain", ""}) : wrong_method("GET");
  if (path == "/metrics") {
    if (!get) return wrong_method("GET");
    const TokenEngine& e = *shared_.engine;
    return exchange.respond({200, "text/plain; version=0.0.4",
                             shared_.metrics.prometheus(shared_.cfg.model, {e.running(), e.waiting(),
                                                                            e.kv_cache_usage(), e.preemptions()})});
  }
  if (path == "/v1/models") {
    if (!get) return wrong_method("GET");
    const nlohmann::json models = {
        {"object", "list"},
        {"data", nlohmann::json::array({{{"id", shared_.cfg.model}, {"object", "model"}, {"created", 0},
                                          {"owned_by", "chaosbench"}, {"max_model_len", shared_.cfg.context_tokens}}})}};
    return exchange.respond({200, "application/json", models.dump()});
  }
  exchange.respond(llm_error_response(llm_error(404, "no such path: " + path, "invalid_request_error", "not_found")));
}

void LlmHandler::completion(OpenAiEndpoint endpoint, const http::ServerRequest& request,
                            const http::ServerExchange& exchange) {
  const auto arrival = TokenEngine::Clock::now();
  auto parsed = parse_request(endpoint, request.body, shared_.limits);
  if (parsed.error) return exchange.respond(llm_error_response(*parsed.error));
  if (!shared_.try_admit()) {
    shared_.metrics.count_rejected();
    return exchange.respond(llm_error_response(
        llm_error(429, fmt::format("the server runs {} requests at most: try again later", shared_.cfg.max_running),
                  "rate_limit_error", "rate_limit_exceeded")));
  }
  shared_.metrics.add_prompt_tokens(parsed.request->prompt.size());
  const auto answer = std::make_shared<LlmCompletion>(shared_, exchange, arrival);
  if (!answer->start(endpoint, *parsed.request)) {  // the engine's queue is full
    shared_.metrics.count_rejected();
    exchange.respond(llm_error_response(
        llm_error(429, "the server's queue is full: try again later", "rate_limit_error", "rate_limit_exceeded")));
  }
}

}  // namespace chaosbench::bench::llm

// The OpenAI-compatible protocol of LlmHttpServer as a handler on the HTTP server core
// (bench/http/server_handler.h): POST /v1/completions and /v1/chat/completions (parsed,
// admitted under max_running, then answered by an LlmCompletion), GET /v1/models,
// /health and /metrics; every error is the OpenAI error object with its status (400, 404,
// 405, 429; and those the core decides: 400, 408, 413, 431, 503).
// Threads: handle() and transport_error() on the io threads, many at once; the state they
// share is LlmServerShared's (thread-safe).
#pragma once

#include <string>

#include "bench/http/server_handler.h"
#include "bench/llm/serve/llm_server_shared.h"

namespace chaosbench::bench::llm {

class LlmHandler final : public http::ServerHandler {
 public:
  explicit LlmHandler(LlmServerShared& shared) : shared_(shared) {}

  void handle(http::ServerRequest request, const http::ServerExchange& exchange) override;
  http::ServerResponse transport_error(int status, const std::string& message) override;

 private:
  void completion(OpenAiEndpoint endpoint, const http::ServerRequest& request, const http::ServerExchange& exchange);

  LlmServerShared& shared_;
};

}  // namespace chaosbench::bench::llm

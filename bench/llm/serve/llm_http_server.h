// The built-in OpenAI-compatible LLM server's HTTP layer, a handler (llm_handler.h) on the
// shared HTTP server core (bench/http/http_server_core.h): POST /v1/completions and
// /v1/chat/completions (streamed as chunked Server-Sent Events, one event written as each
// token comes, TCP_NODELAY set; or one JSON answer), GET /v1/models, GET /health, GET
// /metrics (llm_server_metrics.h). Its settings: llm_server_config.h. Errors are the
// OpenAI error object with its status: 400 bad request, 404 unknown model or path, 405 wrong
// method, 413 body too large, 431 header too large, 429 over max_running or when the
// engine refuses (its queue is full), 503 too many connections. Connections are kept
// alive between requests.
// Bounds against hostile clients as bench/serve's server: max_connections (503 and close
// past it), header_limit, body_limit, request_timeout from a request's first byte to its
// last (408) and for each write of an answer, idle_timeout between requests.
// A client that closes mid-answer cancels its generation at once.
// Threads: construct, port(), stop() from one owner thread; engine(), running() and
// metrics() from any.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

#include "bench/llm/serve/llm_server_config.h"
#include "bench/llm/serve/llm_server_metrics.h"
#include "bench/llm/openai_request.h"
#include "bench/llm/token_engine.h"

namespace boost::asio {
class io_context;
}

namespace chaosbench::bench::llm {

// Makes the engine on the server's io_context (its timers then run on the server's threads).
using EngineFactory = std::function<std::unique_ptr<TokenEngine>(boost::asio::io_context&)>;

class LlmHttpServer {
 public:
  // Binds and listens (throws std::runtime_error when it cannot), then starts the threads.
  LlmHttpServer(LlmServerConfig cfg, const EngineFactory& make_engine);
  ~LlmHttpServer();  // stop()
  LlmHttpServer(const LlmHttpServer&) = delete;
  LlmHttpServer& operator=(const LlmHttpServer&) = delete;

  unsigned short port() const;
  const TokenEngine& engine() const;
  const LlmServerMetrics& metrics() const;
  // Requests admitted and not yet answered or abandoned (what max_running bounds).
  std::size_t running() const;
  // Stops accepting and stops the io threads; answers in progress are cut. Idempotent.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace chaosbench::bench::llm

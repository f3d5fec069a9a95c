// The LLM server: its handler (llm_handler.h) on the HTTP server core, and the engine made
// on the core's io_context.
#include "bench/llm/serve/llm_http_server.h"

#include <stdexcept>

#include "bench/http/http_server_core.h"
#include "bench/llm/serve/llm_handler.h"
#include "bench/llm/serve/llm_server_shared.h"

namespace chaosbench::bench::llm {

struct LlmHttpServer::Impl {
  explicit Impl(LlmServerConfig c) : cfg(std::move(c)), shared(cfg), handler(shared), core(cfg, handler) {}

  // Destroyed in reverse: the core (its io_context, with the connections and completions
  // its handlers hold) before the engine and the shared state they refer to.
  LlmServerConfig cfg;
  LlmServerShared shared;
  LlmHandler handler;
  std::unique_ptr<TokenEngine> engine;
  http::HttpServerCore core;
  bool stopped = false;
};

LlmHttpServer::LlmHttpServer(LlmServerConfig cfg, const EngineFactory& make_engine)
    : impl_(std::make_unique<Impl>(std::move(cfg))) {
  impl_->engine = make_engine(impl_->core.io_context());
  if (!impl_->engine) throw std::runtime_error("llm-serve: no token engine");
  impl_->shared.engine = impl_->engine.get();
  impl_->core.start();
}

LlmHttpServer::~LlmHttpServer() { stop(); }

unsigned short LlmHttpServer::port() const { return impl_->core.port(); }
const TokenEngine& LlmHttpServer::engine() const { return *impl_->engine; }
const LlmServerMetrics& LlmHttpServer::metrics() const { return impl_->shared.metrics; }
std::size_t LlmHttpServer::running() const { return impl_->shared.running.load(); }

void LlmHttpServer::stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  impl_->core.stop();
  impl_->engine->shutdown();  // its sinks post to the io_context, which goes first
}

}  // namespace chaosbench::bench::llm

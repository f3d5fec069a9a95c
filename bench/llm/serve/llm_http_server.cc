// The LLM server's threads; each connection is an LlmSession, admitted by the accept loop
// both built-in servers share (bench/http/accept_loop.h).
#include "bench/llm/serve/llm_http_server.h"

#include <algorithm>
#include <stdexcept>
#include <thread>
#include <vector>

#include "bench/llm/serve/llm_session.h"
#include "bench/http/accept_loop.h"

namespace chaosbench::bench::llm {

struct LlmHttpServer::Impl {
  explicit Impl(LlmServerConfig c)
      : cfg(std::move(c)), shared(cfg), acceptor(ioc, shared.budget, [this](bench::http::AcceptLoop::tcp::socket&& socket, bool counted) {
          auto session = std::make_shared<LlmSession>(std::move(socket), shared, counted);
          counted ? session->start() : session->refuse();
        }) {}

  // Destroyed in reverse: the acceptor and the io_context (with the sessions and
  // generations its handlers hold) before the engine and the shared state they refer to.
  LlmServerConfig cfg;
  LlmServerShared shared;
  std::unique_ptr<TokenEngine> engine;
  boost::asio::io_context ioc;
  bench::http::AcceptLoop acceptor;
  std::vector<std::thread> threads;
  unsigned short port = 0;
  bool stopped = false;
};

LlmHttpServer::LlmHttpServer(LlmServerConfig cfg, const EngineFactory& make_engine)
    : impl_(std::make_unique<Impl>(std::move(cfg))) {
  impl_->engine = make_engine(impl_->ioc);
  if (!impl_->engine) throw std::runtime_error("llm-serve: no token engine");
  impl_->shared.engine = impl_->engine.get();
  impl_->port = impl_->acceptor.start(impl_->cfg.host, impl_->cfg.port, "llm-serve");
  for (int i = 0; i < std::max(1, impl_->cfg.threads); ++i) impl_->threads.emplace_back([this] { impl_->ioc.run(); });
}

LlmHttpServer::~LlmHttpServer() { stop(); }

unsigned short LlmHttpServer::port() const { return impl_->port; }
const TokenEngine& LlmHttpServer::engine() const { return *impl_->engine; }
const LlmServerMetrics& LlmHttpServer::metrics() const { return impl_->shared.metrics; }
std::size_t LlmHttpServer::running() const { return impl_->shared.running.load(); }

void LlmHttpServer::stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  impl_->acceptor.stop();
  impl_->ioc.stop();
  for (auto& t : impl_->threads) t.join();
  impl_->engine->shutdown();  // its sinks post to the io_context, which goes first
}

}  // namespace chaosbench::bench::llm

// The LLM server's acceptor and threads; each connection is an LlmSession. The accept
// loop follows bench/serve/http_server.cc: a connection budget, refusals answered 503,
// and a pause after running out of descriptors instead of a spin.
#include "bench/llm/llm_http_server.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <stdexcept>
#include <thread>
#include <vector>

#include "bench/common/tcp_listen.h"
#include "bench/llm/llm_session.h"

namespace chaosbench::bench::llm {
namespace {

namespace beast = boost::beast;
namespace net = boost::asio;
using tcp = net::ip::tcp;

constexpr auto kAcceptPause = std::chrono::milliseconds(100);

}  // namespace

struct LlmHttpServer::Impl {
  explicit Impl(LlmServerConfig c)
      : cfg(std::move(c)), shared(cfg), accept_strand(net::make_strand(ioc)), acceptor(accept_strand),
        pause(accept_strand) {}

  void accept() {
    acceptor.async_accept(net::make_strand(ioc), [this](beast::error_code ec, tcp::socket socket) {
      if (ec == net::error::operation_aborted || !acceptor.is_open()) return;
      if (ec) {  // out of descriptors and friends: the listening socket stays readable, so pause
        pause.expires_after(kAcceptPause);
        return pause.async_wait([this](beast::error_code e) {
          if (!e && acceptor.is_open()) accept();
        });
      }
      if (shared.budget.try_open()) {
        std::make_shared<LlmSession>(std::move(socket), shared, true)->start();
      } else if (shared.budget.try_refuse()) {
        std::make_shared<LlmSession>(std::move(socket), shared, false)->refuse();
      }  // else: dropped at once
      accept();
    });
  }

  // Destroyed in reverse: the io_context (with the sessions and generations its handlers
  // hold) before the engine and the shared state they refer to.
  LlmServerConfig cfg;
  LlmServerShared shared;
  std::unique_ptr<TokenEngine> engine;
  net::io_context ioc;
  net::strand<net::io_context::executor_type> accept_strand;
  tcp::acceptor acceptor;
  net::steady_timer pause;
  std::vector<std::thread> threads;
  unsigned short port = 0;
  bool stopped = false;
};

LlmHttpServer::LlmHttpServer(LlmServerConfig cfg, const EngineFactory& make_engine)
    : impl_(std::make_unique<Impl>(std::move(cfg))) {
  impl_->engine = make_engine(impl_->ioc);
  if (!impl_->engine) throw std::runtime_error("llm-serve: no token engine");
  impl_->shared.engine = impl_->engine.get();
  impl_->port = listen_tcp(impl_->acceptor, impl_->cfg.host, impl_->cfg.port, "llm-serve");
  impl_->accept();
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
  net::post(impl_->accept_strand, [this] {
    beast::error_code ignored;
    impl_->acceptor.close(ignored);
    impl_->pause.cancel();
  });
  impl_->ioc.stop();
  for (auto& t : impl_->threads) t.join();
  impl_->engine->shutdown();  // its sinks post to the io_context, which goes first
}

}  // namespace chaosbench::bench::llm

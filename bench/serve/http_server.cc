// The Beast side of the server: the shared accept loop (accept_loop.h) admits connections
// under the budget (connection_budget.h) and hands each to an HttpSession (http_session.h).
#include "bench/serve/http_server.h"

#include <algorithm>
#include <thread>
#include <vector>

#include "bench/serve/accept_loop.h"
#include "bench/serve/http_session.h"

namespace chaosbench::bench::serve {

struct HttpServer::Impl {
  Impl(HttpServerConfig c, InferenceService& s)
      : cfg(std::move(c)),
        service(s),
        budget(cfg.max_connections, cfg.max_buffered),
        acceptor(ioc, budget, [this](AcceptLoop::tcp::socket&& socket, bool counted) {
          auto session = std::make_shared<HttpSession>(std::move(socket), service, cfg, budget, counted);
          counted ? session->start() : session->refuse();
        }) {}

  // Destroyed in reverse: the acceptor, then the io_context (and the sessions its handlers
  // hold), before the budget and the config they refer to.
  HttpServerConfig cfg;
  InferenceService& service;
  ConnectionBudget budget;
  boost::asio::io_context ioc;
  AcceptLoop acceptor;
  std::vector<std::thread> threads;
  unsigned short port = 0;
  bool stopped = false;
};

HttpServer::HttpServer(HttpServerConfig cfg, InferenceService& service)
    : impl_(std::make_unique<Impl>(std::move(cfg), service)) {
  impl_->port = impl_->acceptor.start(impl_->cfg.host, impl_->cfg.port, "serve");
  for (int i = 0; i < std::max(1, impl_->cfg.threads); ++i) impl_->threads.emplace_back([this] { impl_->ioc.run(); });
}

HttpServer::~HttpServer() { stop(); }

unsigned short HttpServer::port() const { return impl_->port; }

void HttpServer::stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  impl_->acceptor.stop();
  impl_->service.stop();  // queued requests are answered while the io threads still run
  impl_->ioc.stop();
  for (auto& t : impl_->threads) t.join();
}

}  // namespace chaosbench::bench::serve

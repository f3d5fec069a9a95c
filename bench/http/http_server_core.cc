// HttpServerCore: the io threads, the accept loop and the sessions. See the header.
#include "bench/http/http_server_core.h"

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <thread>
#include <vector>

#include "bench/http/accept_loop.h"
#include "bench/http/server_session.h"

namespace chaosbench::bench::http {

struct HttpServerCore::Impl {
  Impl(ServerConfig c, ServerHandler& h)
      : cfg(std::move(c)),
        handler(h),
        budget(cfg.max_connections, cfg.max_buffered, cfg.max_refusing),
        ioc(std::max(1, cfg.threads)),
        acceptor(ioc, budget, [this](AcceptLoop::tcp::socket&& socket, bool counted) {
          auto session = std::make_shared<ServerSession>(std::move(socket), cfg, budget, handler, sessions, counted);
          counted ? session->start() : session->refuse();
        }) {}

  // Destroyed in reverse: the acceptor, then the io_context (and the sessions its handlers
  // hold), before the registry, the budget and the config they refer to.
  ServerConfig cfg;
  ServerHandler& handler;
  ConnectionBudget budget;
  SessionRegistry sessions;
  boost::asio::io_context ioc;
  AcceptLoop acceptor;
  std::vector<std::thread> threads;
  unsigned short port = 0;
  bool accepting = false;
  bool stopped = false;
};

HttpServerCore::HttpServerCore(ServerConfig cfg, ServerHandler& handler)
    : impl_(std::make_unique<Impl>(std::move(cfg), handler)) {}

HttpServerCore::~HttpServerCore() { stop(); }

boost::asio::io_context& HttpServerCore::io_context() { return impl_->ioc; }

unsigned short HttpServerCore::start() {
  impl_->port = impl_->acceptor.start(impl_->cfg.host, impl_->cfg.port, impl_->cfg.name);
  impl_->accepting = true;
  for (int i = 0; i < std::max(1, impl_->cfg.threads); ++i) impl_->threads.emplace_back([this] { impl_->ioc.run(); });
  return impl_->port;
}

unsigned short HttpServerCore::port() const { return impl_->port; }

const ServerConfig& HttpServerCore::config() const { return impl_->cfg; }

void HttpServerCore::stop_accepting() {
  if (!impl_->accepting) return;
  impl_->accepting = false;
  impl_->acceptor.stop();
}

void HttpServerCore::stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  stop_accepting();
  impl_->ioc.stop();
  for (auto& t : impl_->threads) t.join();
  // No io thread runs now: close the listener (its posted close may never have run) and
  // every connection, dropping what their handlers left with them.
  impl_->acceptor.close();
  for (const auto& session : impl_->sessions.live()) session->abandon();
}

}  // namespace chaosbench::bench::http

// The Beast side of the server: an acceptor that admits connections under the budget
// (bench/serve/connection_budget.h) and hands each to an HttpSession (http_session.h).
#include "bench/serve/http_server.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <stdexcept>
#include <thread>
#include <vector>

#include "bench/common/tcp_listen.h"
#include "bench/serve/http_session.h"

namespace chaosbench::bench::serve {
namespace {

namespace beast = boost::beast;
namespace net = boost::asio;
using tcp = net::ip::tcp;

// After EMFILE and friends the listening socket stays readable: accepting again at once
// would spin. Pause this long between tries.
constexpr auto kAcceptPause = std::chrono::milliseconds(100);

bool out_of_resources(const beast::error_code& ec) {
  return ec == net::error::no_descriptors || ec == boost::system::errc::too_many_files_open_in_system ||
         ec == net::error::no_buffer_space || ec == net::error::no_memory;
}

}  // namespace

struct HttpServer::Impl {
  Impl(HttpServerConfig c, InferenceService& s)
      : cfg(std::move(c)),
        service(s),
        budget(cfg.max_connections, cfg.max_buffered),
        accept_strand(net::make_strand(ioc)),
        acceptor(accept_strand),
        pause(accept_strand) {}
  ~Impl() {
    if (reserve_fd >= 0) ::close(reserve_fd);
  }

  void accept() {
    acceptor.async_accept(net::make_strand(ioc), [this](beast::error_code ec, tcp::socket socket) {
      if (ec == net::error::operation_aborted || !acceptor.is_open()) return;
      if (ec) return on_accept_error(ec);
      if (budget.try_open()) {
        std::make_shared<HttpSession>(std::move(socket), service, cfg, budget, true)->start();
      } else if (budget.try_refuse()) {
        std::make_shared<HttpSession>(std::move(socket), service, cfg, budget, false)->refuse();
      }  // else: dropped at once (the socket closes here)
      accept();
    });
  }

  // Out of descriptors: give the spare one back to accept and drop one waiting client (it
  // hears a close instead of hanging in the backlog), then pause before accepting again.
  void on_accept_error(const beast::error_code& ec) {
    if (!out_of_resources(ec)) return accept();  // ECONNABORTED and other one-offs
    if (reserve_fd >= 0) {
      ::close(reserve_fd);
      const int fd = ::accept4(acceptor.native_handle(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd >= 0) ::close(fd);
      reserve_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    }
    pause.expires_after(kAcceptPause);
    pause.async_wait([this](beast::error_code e) {
      if (!e && acceptor.is_open()) accept();
    });
  }

  // Destroyed in reverse: the io_context (and the sessions its handlers hold) before the
  // budget and the config they refer to.
  HttpServerConfig cfg;
  InferenceService& service;
  ConnectionBudget budget;
  net::io_context ioc;
  // The acceptor, its back-off timer and stop()'s close run here, never concurrently.
  net::strand<net::io_context::executor_type> accept_strand;
  tcp::acceptor acceptor;
  net::steady_timer pause;  // accept() back-off
  int reserve_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  std::vector<std::thread> threads;
  unsigned short port = 0;
  bool stopped = false;
};

HttpServer::HttpServer(HttpServerConfig cfg, InferenceService& service)
    : impl_(std::make_unique<Impl>(std::move(cfg), service)) {
  impl_->port = listen_tcp(impl_->acceptor, impl_->cfg.host, impl_->cfg.port, "serve");
  impl_->accept();
  for (int i = 0; i < std::max(1, impl_->cfg.threads); ++i) impl_->threads.emplace_back([this] { impl_->ioc.run(); });
}

HttpServer::~HttpServer() { stop(); }

unsigned short HttpServer::port() const { return impl_->port; }

void HttpServer::stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  net::post(impl_->accept_strand, [this] {
    beast::error_code ignored;
    impl_->acceptor.close(ignored);
    impl_->pause.cancel();
  });
  impl_->service.stop();  // queued requests are answered while the io threads still run
  impl_->ioc.stop();
  for (auto& t : impl_->threads) t.join();
}

}  // namespace chaosbench::bench::serve

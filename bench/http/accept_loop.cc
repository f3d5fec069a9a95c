// AcceptLoop. See the header.
#include "bench/http/accept_loop.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <chrono>

#include "bench/common/tcp_listen.h"

namespace chaosbench::bench::http {
namespace {

namespace net = boost::asio;
using error_code = boost::system::error_code;

// After EMFILE and friends the listening socket stays readable: accepting again at once
// would spin. Pause this long between tries.
constexpr auto kAcceptPause = std::chrono::milliseconds(100);

bool out_of_resources(const error_code& ec) {
  return ec == net::error::no_descriptors || ec == boost::system::errc::too_many_files_open_in_system ||
         ec == net::error::no_buffer_space || ec == net::error::no_memory;
}

}  // namespace

AcceptLoop::AcceptLoop(net::io_context& ioc, ConnectionBudget& budget, OnConnection on_connection)
    : ioc_(ioc),
      budget_(budget),
      on_connection_(std::move(on_connection)),
      strand_(net::make_strand(ioc)),
      acceptor_(strand_),
      pause_(strand_),
      reserve_fd_(::open("/dev/null", O_RDONLY | O_CLOEXEC)) {}

AcceptLoop::~AcceptLoop() {
  if (reserve_fd_ >= 0) ::close(reserve_fd_);
}

unsigned short AcceptLoop::start(const std::string& host, unsigned short port, const std::string& who) {
  const unsigned short bound = listen_tcp(acceptor_, host, port, who);
  accept();
  return bound;
}

void AcceptLoop::stop() {
  net::post(strand_, [this] {
    error_code ignored;
    acceptor_.close(ignored);
    pause_.cancel();
  });
}

void AcceptLoop::close() {
  error_code ignored;
  acceptor_.close(ignored);
  pause_.cancel();
}

void AcceptLoop::accept() {
  acceptor_.async_accept(net::make_strand(ioc_), [this](error_code ec, tcp::socket socket) {
    if (ec == net::error::operation_aborted || !acceptor_.is_open()) return;
    if (ec) return on_accept_error(ec);
    if (budget_.try_open()) on_connection_(std::move(socket), true);
    else if (budget_.try_refuse()) on_connection_(std::move(socket), false);
    // else: dropped at once (the socket closes here)
    accept();
  });
}

void AcceptLoop::on_accept_error(const error_code& ec) {
  if (!out_of_resources(ec)) return accept();  // ECONNABORTED and other one-offs
  if (reserve_fd_ >= 0) {
    ::close(reserve_fd_);
    const int fd = ::accept4(acceptor_.native_handle(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd >= 0) ::close(fd);
    reserve_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  }
  pause_.expires_after(kAcceptPause);
  pause_.async_wait([this](error_code e) {
    if (!e && acceptor_.is_open()) accept();
  });
}

}  // namespace chaosbench::bench::http

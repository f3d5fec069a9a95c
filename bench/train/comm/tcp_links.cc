#include "bench/train/comm/tcp_links.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "bench/train/comm/gradient_reducer.h"
#include "common/values/errno_text.h"

namespace chaosbench::bench::train {
namespace {

using common::errno_text;

timeval to_timeval(std::chrono::milliseconds t) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(t.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>(t.count() % 1000 * 1000);
  return tv;
}

sockaddr_in parse_address(const std::string& host, std::uint16_t port, const char* what) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  if (::inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1)
    throw CollectiveError(fmt::format("{}: \"{}\" is not an IPv4 address", what, host));
  return a;
}

}  // namespace

void configure_tcp_socket(int fd, std::chrono::milliseconds timeout) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  const timeval tv = to_timeval(timeout);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

bool wait_fd(int fd, short events, TcpClock::time_point deadline) {
  while (true) {
    // Past the deadline it still looks once: what is ready already counts.
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - TcpClock::now()).count();
    pollfd p{fd, events, 0};
    const int rc = ::poll(&p, 1, static_cast<int>(std::clamp<long long>(left, 0, 1000)));
    if (rc > 0) return true;
    if (rc < 0 && errno != EINTR) return false;
    if (left <= 0) return false;
  }
}

int listen_and_publish(gloo::rendezvous::Store& store, const std::string& key, const std::string& host,
                       const char* what) {
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0) throw CollectiveError(fmt::format("{}: socket: {}", what, errno_text(errno)));
  sockaddr_in me = parse_address(host, 0, what);
  socklen_t len = sizeof me;
  if (::bind(listener, reinterpret_cast<sockaddr*>(&me), sizeof me) != 0 || ::listen(listener, 64) != 0 ||
      ::getsockname(listener, reinterpret_cast<sockaddr*>(&me), &len) != 0) {
    const int err = errno;
    ::close(listener);
    throw CollectiveError(fmt::format("{}: listening on {}: {}", what, host, errno_text(err)));
  }
  const std::string mine = fmt::format("{}:{}", host, ntohs(me.sin_port));
  try {
    store.set(key, std::vector<char>(mine.begin(), mine.end()));
  } catch (...) {
    ::close(listener);
    throw;
  }
  return listener;
}

int connect_published(gloo::rendezvous::Store& store, const std::string& key, int peer_rank, int rank,
                      std::chrono::milliseconds timeout, TcpClock::time_point deadline, const char* what) {
  std::string peer;
  try {
    // The time left of the whole set-up, not a fresh timeout per peer.
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - TcpClock::now());
    store.wait({key}, std::max(left, std::chrono::milliseconds(1)));
    const auto bytes = store.get(key);
    peer.assign(bytes.begin(), bytes.end());
  } catch (const std::exception& e) {
    throw CollectiveError(fmt::format("{}: rank {} did not publish its address: {}", what, peer_rank, e.what()));
  }
  const auto colon = peer.rfind(':');
  unsigned port = 0;
  const char* port_end = peer.data() + peer.size();
  if (colon == std::string::npos || std::from_chars(peer.data() + colon + 1, port_end, port).ptr != port_end ||
      port == 0 || port > 65535)
    throw CollectiveError(fmt::format("{}: a malformed address in the store: {}", what, peer.substr(0, 64)));
  const sockaddr_in to = parse_address(peer.substr(0, colon), static_cast<std::uint16_t>(port), what);
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) throw CollectiveError(fmt::format("{}: socket: {}", what, errno_text(errno)));
  int err = 0;
  socklen_t err_len = sizeof err;
  std::string why;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0 && errno != EINPROGRESS)
    why = errno_text(errno);
  else if (!wait_fd(fd, POLLOUT, deadline))
    why = "timed out";
  else if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &err_len) != 0 || err != 0)
    why = errno_text(err ? err : errno);
  if (!why.empty()) {
    ::close(fd);
    throw CollectiveError(fmt::format("{}: connecting to rank {} at {}: {}", what, peer_rank, peer, why));
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  configure_tcp_socket(fd, timeout);
  const TcpHello hello{kTcpHelloMagic, static_cast<std::uint32_t>(rank)};
  if (::send(fd, &hello, sizeof hello, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof hello)) {
    const int saved = errno;
    ::close(fd);
    throw CollectiveError(fmt::format("{}: greeting rank {}: {}", what, peer_rank, errno_text(saved)));
  }
  return fd;
}

int accept_hello(int listener, std::chrono::milliseconds timeout, TcpClock::time_point deadline, int& rank,
                 const char* what) {
  if (!wait_fd(listener, POLLIN, deadline))
    throw CollectiveError(fmt::format("{}: a peer did not connect within {} ms", what, timeout.count()));
  const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) throw CollectiveError(fmt::format("{}: accept: {}", what, errno_text(errno)));
  configure_tcp_socket(fd, timeout);
  TcpHello got{};
  if (::recv(fd, &got, sizeof got, MSG_WAITALL) != static_cast<ssize_t>(sizeof got) || got.magic != kTcpHelloMagic ||
      got.rank > 1u << 20) {
    ::close(fd);
    throw CollectiveError(fmt::format("{}: a connection that did not say who it is", what));
  }
  rank = static_cast<int>(got.rank);
  return fd;
}

}  // namespace chaosbench::bench::train

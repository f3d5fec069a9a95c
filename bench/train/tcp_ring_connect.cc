// The gradient ring's connections (tcp_ring_reducer.h): each rank listens, publishes its
// address in the rendezvous store, connects to the next rank and accepts the previous
// one, which must say who it is; blocking sockets with send and receive timeouts.
#include "bench/train/tcp_ring_reducer.h"

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

#include <fmt/format.h>

namespace chaosbench::bench::train {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint32_t kHelloMagic = 0x4f4c4548;  // "HELO"

// The first bytes on a new connection: who is calling.
struct Hello {
  std::uint32_t magic;
  std::uint32_t rank;
};

std::string errno_text(int err) { return std::strerror(err); }

int mod(int a, int n) { return ((a % n) + n) % n; }

timeval to_timeval(std::chrono::milliseconds t) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(t.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>(t.count() % 1000 * 1000);
  return tv;
}

// Blocking socket options: no Nagle delay for the small headers, and send/receive
// timeouts, so that a connection that makes no progress fails instead of hanging.
void configure(int fd, std::chrono::milliseconds timeout) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  const timeval tv = to_timeval(timeout);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

bool wait_fd(int fd, short events, Clock::time_point deadline) {
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    const int rc = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (rc > 0) return true;
    if (rc < 0 && errno != EINTR) return false;
  }
}

sockaddr_in parse_address(const std::string& host, std::uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  if (::inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1)
    throw CollectiveError(fmt::format("gradient ring: \"{}\" is not an IPv4 address", host));
  return a;
}

}  // namespace

void TcpRingReducer::connect_ring(gloo::rendezvous::Store& store, const std::string& key, const std::string& host) {
  const auto deadline = Clock::now() + timeout_;
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0) throw CollectiveError(fmt::format("gradient ring: socket: {}", errno_text(errno)));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } close_listener{listener};
  sockaddr_in me = parse_address(host, 0);
  socklen_t len = sizeof me;
  if (::bind(listener, reinterpret_cast<sockaddr*>(&me), sizeof me) != 0 || ::listen(listener, 4) != 0 ||
      ::getsockname(listener, reinterpret_cast<sockaddr*>(&me), &len) != 0)
    throw CollectiveError(fmt::format("gradient ring: listening on {}: {}", host, errno_text(errno)));
  const std::string mine = fmt::format("{}:{}", host, ntohs(me.sin_port));
  store.set(fmt::format("{}/{}", key, rank_), std::vector<char>(mine.begin(), mine.end()));

  // To the next rank: its address from the store, then who we are.
  const int next = mod(rank_ + 1, size_), prev = mod(rank_ - 1, size_);
  const std::string next_key = fmt::format("{}/{}", key, next);
  std::string peer;
  try {
    store.wait({next_key}, timeout_);
    const auto bytes = store.get(next_key);
    peer.assign(bytes.begin(), bytes.end());
  } catch (const std::exception& e) {
    throw CollectiveError(fmt::format("gradient ring: rank {} did not publish its address: {}", next, e.what()));
  }
  const auto colon = peer.rfind(':');
  unsigned port = 0;
  const char* port_end = peer.data() + peer.size();
  if (colon == std::string::npos || std::from_chars(peer.data() + colon + 1, port_end, port).ptr != port_end ||
      port == 0 || port > 65535)
    throw CollectiveError("gradient ring: a malformed address in the store: " + peer.substr(0, 64));
  const sockaddr_in to = parse_address(peer.substr(0, colon), static_cast<std::uint16_t>(port));
  send_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (send_fd_ < 0) throw CollectiveError(fmt::format("gradient ring: socket: {}", errno_text(errno)));
  if (::connect(send_fd_, reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0 && errno != EINPROGRESS)
    throw CollectiveError(fmt::format("gradient ring: connecting to rank {} at {}: {}", next, peer, errno_text(errno)));
  int err = 0;
  socklen_t err_len = sizeof err;
  if (!wait_fd(send_fd_, POLLOUT, deadline) || ::getsockopt(send_fd_, SOL_SOCKET, SO_ERROR, &err, &err_len) != 0 || err != 0)
    throw CollectiveError(fmt::format("gradient ring: connecting to rank {} at {}: {}", next, peer,
                                      err ? errno_text(err) : std::string("timed out")));
  ::fcntl(send_fd_, F_SETFL, ::fcntl(send_fd_, F_GETFL) & ~O_NONBLOCK);
  configure(send_fd_, timeout_);
  const Hello hello{kHelloMagic, static_cast<std::uint32_t>(rank_)};
  if (::send(send_fd_, &hello, sizeof hello, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof hello))
    throw CollectiveError(fmt::format("gradient ring: greeting rank {}: {}", next, errno_text(errno)));

  // From the previous rank: whoever calls must say it is that rank.
  if (!wait_fd(listener, POLLIN, deadline))
    throw CollectiveError(fmt::format("gradient ring: rank {} did not connect within {} ms", prev, timeout_.count()));
  recv_fd_ = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  if (recv_fd_ < 0) throw CollectiveError(fmt::format("gradient ring: accept: {}", errno_text(errno)));
  configure(recv_fd_, timeout_);
  Hello got{};
  if (::recv(recv_fd_, &got, sizeof got, MSG_WAITALL) != static_cast<ssize_t>(sizeof got) || got.magic != kHelloMagic ||
      got.rank != static_cast<std::uint32_t>(prev))
    throw CollectiveError(fmt::format("gradient ring: the connection accepted is not from rank {}", prev));
}

}  // namespace chaosbench::bench::train

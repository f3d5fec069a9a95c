#include "harness/agent/link_channel.h"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

namespace chaosbench::harness {

using std::chrono::milliseconds;

LinkChannel::LinkChannel(common::UniqueFd fd, milliseconds send_timeout) : fd_(std::move(fd)) {
  int one = 1;
  ::setsockopt(fd_.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(send_timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((send_timeout.count() % 1000) * 1000);
  ::setsockopt(fd_.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

void LinkChannel::send(MessageType type, std::string_view payload) {
  const std::string bytes = encode_frame(type, payload);
  std::lock_guard lock(send_mutex_);
  if (broken_.load()) throw LinkError(error_);
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd_.get(), bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    const std::string why = n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)
                                ? std::string("the peer stopped reading (send timed out)")
                                : fmt::format("send failed: {}", std::strerror(errno));
    error_ = why;  // a frame cut in the middle leaves the stream unusable
    broken_ = true;
    ::shutdown(fd_.get(), SHUT_RDWR);
    throw LinkError(why);
  }
}

bool LinkChannel::pump() {
  if (broken_.load()) return false;
  char buf[65536];
  // At most 1 MiB a call: a peer that sends without pause cannot make one call buffer
  // without bound; the rest is read on the next call.
  for (std::size_t total = 0; total < (1u << 20);) {
    const ssize_t n = ::recv(fd_.get(), buf, sizeof(buf), MSG_DONTWAIT);
    if (n > 0) {
      reader_.feed(std::string_view(buf, static_cast<std::size_t>(n)));
      total += static_cast<std::size_t>(n);
      if (static_cast<std::size_t>(n) < sizeof(buf)) return true;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    close(n == 0 ? "the peer closed the link" : fmt::format("receive failed: {}", std::strerror(errno)));
    return false;
  }
  return true;
}

std::string LinkChannel::error() const {
  std::lock_guard lock(send_mutex_);
  return error_;
}

std::optional<Frame> LinkChannel::next() {
  auto frame = reader_.next();
  if (!frame && !reader_.error().empty() && !broken_.load()) close(reader_.error());
  return frame;
}

std::optional<Frame> LinkChannel::receive(milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (auto f = next()) return f;
    if (broken_.load()) throw LinkError(error());
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd p{fd_.get(), POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(left.count()) + 1);
    if (r < 0 && errno != EINTR) throw LinkError(fmt::format("poll failed: {}", std::strerror(errno)));
    if (r > 0) pump();
  }
}

void LinkChannel::close(const std::string& why) {
  {
    std::lock_guard lock(send_mutex_);
    if (error_.empty()) error_ = why.empty() ? std::string("closed") : why;
    broken_ = true;
  }
  ::shutdown(fd_.get(), SHUT_RDWR);
}

common::UniqueFd dial_link(const std::string& address, int port, milliseconds timeout) {
  const std::string where = fmt::format("{}:{}", address, port);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  if (port <= 0 || port > 65535 || ::inet_pton(AF_INET, address.c_str(), &addr.sin_addr) != 1)
    throw LinkError(fmt::format("{} is not an IPv4 address and port", where));
  common::UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) throw LinkError(fmt::format("socket: {}", std::strerror(errno)));
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 && errno != EINPROGRESS)
    throw LinkError(fmt::format("cannot reach the controller at {}: {}", where, std::strerror(errno)));
  pollfd p{fd.get(), POLLOUT, 0};
  int r;
  do r = ::poll(&p, 1, static_cast<int>(timeout.count())); while (r < 0 && errno == EINTR);
  if (r == 0) throw LinkError(fmt::format("cannot reach the controller at {}: timed out after {} ms", where, timeout.count()));
  int err = 0;
  socklen_t len = sizeof(err);
  ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
  if (r < 0 || err != 0)
    throw LinkError(fmt::format("cannot reach the controller at {}: {}", where, std::strerror(r < 0 ? errno : err)));
  ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);  // blocking sends
  return fd;
}

}  // namespace chaosbench::harness

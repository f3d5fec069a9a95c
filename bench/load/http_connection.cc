#include "bench/load/http_connection.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>

namespace chaosbench::bench::load {

HttpConnection::HttpConnection(int epoll_fd, std::uint32_t id) : epoll_fd_(epoll_fd), id_(id) {}

HttpConnection::~HttpConnection() { close(); }

void HttpConnection::close() {
  if (fd_ >= 0) ::close(fd_);  // closing also removes it from the epoll set
  fd_ = -1;
  connecting_ = false;
  watching_writes_ = false;
  request_ = nullptr;
  in_.clear();
}

void HttpConnection::watch_writes(bool on) {
  if (on == watching_writes_) return;
  epoll_event ev{};
  ev.events = EPOLLIN | (on ? EPOLLOUT : 0u);
  ev.data.u32 = id_;
  epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd_, &ev);
  watching_writes_ = on;
}

bool HttpConnection::start(const std::string& request, const sockaddr* address, socklen_t length) {
  request_ = &request;
  written_ = 0;
  in_.clear();
  if (fd_ >= 0) return write_some();
  fd_ = ::socket(address->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  served_ = 0;
  if (fd_ < 0) return request_ = nullptr, false;
  const int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLOUT;
  ev.data.u32 = id_;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd_, &ev) != 0) return close(), false;
  watching_writes_ = true;
  if (::connect(fd_, address, length) == 0) return write_some();
  if (errno != EINPROGRESS) return close(), false;
  connecting_ = true;
  return true;
}

bool HttpConnection::write_some() {
  while (written_ < request_->size()) {
    const auto n = ::send(fd_, request_->data() + written_, request_->size() - written_, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        watch_writes(true);
        return true;
      }
      if (errno == EINTR) continue;
      close();
      return false;
    }
    written_ += static_cast<std::size_t>(n);
  }
  watch_writes(false);
  return true;
}

HttpConnection::Event HttpConnection::on_ready(std::uint32_t events) {
  if (fd_ < 0) return Event::kNone;
  const bool had_request = busy();
  failed_stale_ = false;
  if (connecting_) {
    int err = 0;
    socklen_t len = sizeof err;
    if ((events & (EPOLLERR | EPOLLHUP)) || getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
      close();
      return had_request ? Event::kFailed : Event::kNone;
    }
    if (!(events & EPOLLOUT)) return Event::kNone;
    connecting_ = false;
  }
  if (busy() && written_ < request_->size() && (events & EPOLLOUT) && !write_some())
    return Event::kFailed;
  if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR))) return Event::kNone;
  char buffer[16384];
  const auto n = ::recv(fd_, buffer, sizeof buffer, 0);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return Event::kNone;
  if (n <= 0 || !busy()) {  // closed, reset, or bytes nobody asked for
    failed_stale_ = had_request && served_ > 0 && in_.empty();
    close();
    return had_request ? Event::kFailed : Event::kNone;
  }
  in_.append(buffer, static_cast<std::size_t>(n));
  switch (parser_.parse(in_)) {
    case HttpResponseParser::Outcome::kNeedMore:
      return Event::kNone;
    case HttpResponseParser::Outcome::kMalformed:
      close();
      return Event::kFailed;
    case HttpResponseParser::Outcome::kComplete:
      break;
  }
  request_ = nullptr;
  ++served_;
  in_.clear();
  if (!parser_.keep_alive()) close();
  return Event::kResponse;
}

}  // namespace chaosbench::bench::load

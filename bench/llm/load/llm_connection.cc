#include "bench/llm/load/llm_connection.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>

namespace chaosbench::bench::llm {

LlmConnection::LlmConnection(int epoll_fd, std::uint32_t id) : epoll_fd_(epoll_fd), id_(id) {}

LlmConnection::~LlmConnection() { close(); }

void LlmConnection::close() {
  if (fd_ >= 0) ::close(fd_);  // also leaves the epoll set
  fd_ = -1;
  connecting_ = false;
  watching_writes_ = false;
  answered_ = 0;
}

std::unique_ptr<LlmStreamReader> LlmConnection::take() {
  if (reader_ && reader_->reusable()) ++answered_;
  else close();
  request_.clear();
  return std::move(reader_);
}

void LlmConnection::watch_writes(bool on) {
  if (on == watching_writes_ || fd_ < 0) return;
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP | (on ? EPOLLOUT : 0u);
  ev.data.u32 = id_;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd_, &ev);
  watching_writes_ = on;
}

bool LlmConnection::connect_to(const sockaddr* address, socklen_t length) {
  fd_ = ::socket(address->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return false;
  const int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP | EPOLLOUT;
  ev.data.u32 = id_;
  watching_writes_ = true;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd_, &ev) != 0) return false;
  if (::connect(fd_, address, length) == 0) return true;
  if (errno != EINPROGRESS) return false;
  connecting_ = true;
  return true;
}

bool LlmConnection::start(std::string request, const sockaddr* address, socklen_t length,
                          std::unique_ptr<LlmStreamReader> reader) {
  request_ = std::move(request);
  written_ = 0;
  reader_ = std::move(reader);
  reused_ = fd_ >= 0;
  if (fd_ < 0 && !connect_to(address, length)) {
    close();
    return false;
  }
  if (connecting_) return true;
  if (write_some(Clock::now())) return true;
  close();
  return false;
}

bool LlmConnection::write_some(Clock::time_point now) {
  while (written_ < request_.size()) {
    const auto n = ::send(fd_, request_.data() + written_, request_.size() - written_, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) return false;
      watch_writes(true);
      return true;
    }
    written_ += static_cast<std::size_t>(n);
  }
  reader_->sent(now);
  watch_writes(false);
  return true;
}

bool LlmConnection::preconnect(const sockaddr* address, socklen_t length) {
  close();
  if (connect_to(address, length)) {
    if (!connecting_) watch_writes(false);
    return true;
  }
  close();
  return false;
}

// Whether a connect in progress ended (true), well or not (then closed).
bool LlmConnection::connect_ended(std::uint32_t events) {
  int err = 0;
  socklen_t len = sizeof err;
  if ((events & EPOLLERR) || ::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
    close();
    return true;
  }
  if (!(events & EPOLLOUT)) return false;
  connecting_ = false;
  return true;
}

LlmConnection::Event LlmConnection::on_ready(std::uint32_t events, char* buffer, std::size_t size) {
  if (fd_ < 0) return Event::kNone;
  if (!busy()) {  // opened in advance; or idle, and the server closed it or sent what nobody asked for
    if (!connecting_) close();
    else if (connect_ended(events) && fd_ >= 0) watch_writes(false);
    return Event::kNone;
  }
  if (connecting_) {
    if (!connect_ended(events)) return Event::kNone;
    if (fd_ < 0) return Event::kNoAnswer;
  }
  if (written_ < request_.size() && (events & EPOLLOUT) && !write_some(Clock::now())) {
    close();
    return Event::kNoAnswer;
  }
  if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR | EPOLLRDHUP))) return Event::kNone;
  const auto n = ::recv(fd_, buffer, size, 0);
  const auto at = Clock::now();  // the bytes' arrival: taken as the read returns
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return Event::kNone;
  if (n <= 0) {
    const bool answered = reader_->any_byte();
    close();
    if (!answered) return Event::kNoAnswer;
    reader_->on_eof(at);
    return Event::kEnded;
  }
  return reader_->on_bytes({buffer, static_cast<std::size_t>(n)}, at) ? Event::kEnded : Event::kNone;
}

}  // namespace chaosbench::bench::llm

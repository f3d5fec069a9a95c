#include "bench/http/http_client_connection.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>

namespace chaosbench::bench::http {

HttpClientConnection::HttpClientConnection(int epoll_fd, std::uint32_t id, HttpResponseReader::Limits limits)
    : epoll_fd_(epoll_fd), id_(id), response_(limits) {}

HttpClientConnection::~HttpClientConnection() { close(); }

void HttpClientConnection::close() {
  if (fd_ >= 0) ::close(fd_);  // also leaves the epoll set
  fd_ = -1;
  connecting_ = false;
  watching_writes_ = false;
  sink_ = nullptr;
  request_ = {};
}

void HttpClientConnection::watch_writes(bool on) {
  if (on == watching_writes_ || fd_ < 0) return;
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP | (on ? EPOLLOUT : 0u);
  ev.data.u32 = id_;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd_, &ev);
  watching_writes_ = on;
}

bool HttpClientConnection::connect_to(const HttpClientEndpoint::Address& to) {
  fd_ = ::socket(to.get()->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return false;
  const int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP | EPOLLOUT;
  ev.data.u32 = id_;
  watching_writes_ = true;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd_, &ev) != 0) return false;
  if (::connect(fd_, to.get(), to.length) == 0) return true;
  if (errno != EINPROGRESS) return false;
  connecting_ = true;
  return true;
}

bool HttpClientConnection::preconnect(const HttpClientEndpoint::Address& to) {
  close();
  if (!connect_to(to)) {
    close();
    return false;
  }
  if (!connecting_) watch_writes(false);
  return true;
}

HttpClientConnection::Event HttpClientConnection::start(std::string_view request, const HttpClientEndpoint::Address& to,
                                                        HttpResponseSink& sink) {
  request_ = request;
  written_ = 0;
  sink_ = &sink;
  any_byte_ = false;
  response_.reset();
  reused_ = fd_ >= 0;
  if (fd_ < 0 && !connect_to(to)) return fail(Event::kNoAnswer);
  if (connecting_ || write_some(Clock::now())) return Event::kNone;
  return fail(Event::kNoAnswer);
}

bool HttpClientConnection::write_some(Clock::time_point now) {
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
  sink_->on_sent(now);
  watch_writes(false);
  return true;
}

// Whether a connect in progress ended (true), well or not (then closed).
bool HttpClientConnection::connect_ended(std::uint32_t events) {
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

HttpClientConnection::Event HttpClientConnection::on_ready(std::uint32_t events, char* buffer, std::size_t size) {
  if (fd_ < 0) return Event::kNone;
  if (!busy()) {  // opened in advance; or idle, and the server closed it or sent what nobody asked for
    if (!connecting_) close();
    else if (connect_ended(events) && fd_ >= 0) watch_writes(false);
    return Event::kNone;
  }
  if (connecting_) {
    if (!connect_ended(events)) return Event::kNone;
    if (fd_ < 0) {
      event_time_ = Clock::now();
      return fail(Event::kNoAnswer);
    }
  }
  if (written_ < request_.size() && (events & EPOLLOUT)) {
    event_time_ = Clock::now();
    if (!write_some(event_time_)) return fail(Event::kNoAnswer);
  }
  if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR | EPOLLRDHUP))) return Event::kNone;
  const auto n = ::recv(fd_, buffer, size, 0);
  event_time_ = Clock::now();  // the bytes' arrival: taken as the read returns
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return Event::kNone;
  if (n <= 0) return on_eof();
  return on_bytes({buffer, static_cast<std::size_t>(n)}, event_time_);
}

HttpClientConnection::Event HttpClientConnection::on_bytes(std::string_view bytes, Clock::time_point at) {
  if (!any_byte_) {
    any_byte_ = true;
    sink_->on_first_byte(at);
  }
  while (!bytes.empty()) {
    const bool had_head = response_.head_done();
    const auto step = response_.step(bytes);
    bytes.remove_prefix(step.consumed);
    if (!had_head && response_.head_done() && !sink_->on_head(response_, at)) return fail(Event::kStopped);
    if (!step.body.empty() && !sink_->on_body(step.body, at)) return fail(Event::kStopped);
    if (response_.state() == HttpResponseReader::State::kComplete) return complete(!bytes.empty());
    if (response_.state() == HttpResponseReader::State::kError) return fail(Event::kBroken);
  }
  return Event::kNone;
}

HttpClientConnection::Event HttpClientConnection::on_eof() {
  if (!any_byte_) return fail(Event::kNoAnswer);
  if (response_.finish_at_eof() == HttpResponseReader::State::kComplete) return complete(false);
  return fail(Event::kBroken);
}

// The answer ended well. Bytes after it, which nobody asked for, or a request not all
// written (a server answering early) make the socket unusable for the next request.
HttpClientConnection::Event HttpClientConnection::complete(bool more_bytes) {
  if (!response_.keep_alive() || more_bytes || written_ < request_.size()) close();
  sink_ = nullptr;
  request_ = {};
  return Event::kComplete;
}

}  // namespace chaosbench::bench::http

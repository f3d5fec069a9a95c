#include "stub_http_server.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <system_error>

#include "common/kernel/netns.h"

namespace chaosbench::test {
namespace {

int listening_socket(unsigned short& port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 16) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    int e = errno;
    ::close(fd);
    throw std::system_error(e, std::generic_category(), "bind/listen on 127.0.0.1");
  }
  port = ntohs(addr.sin_port);
  return fd;
}

std::string reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 503: return "Service Unavailable";
    default: return "Status";
  }
}

}  // namespace

StubHttpServer::StubHttpServer(std::function<StubAnswer(const std::string&)> answer, int netns_fd)
    : answer_(std::move(answer)) {
  // A socket keeps the namespace it was made in, whichever thread uses it later.
  if (netns_fd >= 0) common::in_netns(netns_fd, [&] { listen_fd_ = listening_socket(port_); });
  else listen_fd_ = listening_socket(port_);
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC);
  thread_ = std::thread([this] { serve(); });
}

StubHttpServer::~StubHttpServer() {
  std::uint64_t one = 1;
  (void)::write(stop_fd_, &one, sizeof one);
  thread_.join();
  ::close(listen_fd_);
  ::close(stop_fd_);
}

std::vector<std::string> StubHttpServer::targets() const {
  std::lock_guard lock(mutex_);
  return targets_;
}

void StubHttpServer::serve() {
  for (;;) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0 && errno != EINTR) return;
    if (fds[1].revents) return;
    if (!(fds[0].revents & POLLIN)) continue;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    answer_one(fd);
    ::close(fd);
  }
}

void StubHttpServer::answer_one(int fd) {
  timeval tv{2, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string request;
  char buf[4096];
  while (request.find("\r\n\r\n") == std::string::npos && request.size() < 65536) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) return;
    request.append(buf, static_cast<std::size_t>(n));
  }
  // "GET /path?query HTTP/1.1"
  const auto sp1 = request.find(' '), sp2 = request.find(' ', sp1 + 1);
  const std::string target = sp1 == std::string::npos || sp2 == std::string::npos ? "" : request.substr(sp1 + 1, sp2 - sp1 - 1);
  {
    std::lock_guard lock(mutex_);
    targets_.push_back(target);
  }
  const StubAnswer a = answer_(target);
  if (a.delay.count() > 0) {
    pollfd stop{stop_fd_, POLLIN, 0};
    if (::poll(&stop, 1, static_cast<int>(a.delay.count())) > 0) return;
  }
  const std::string reply = fmt::format("HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
                                        a.status, reason(a.status), a.content_type, a.body.size(), a.body);
  std::size_t sent = 0;
  while (sent < reply.size()) {
    ssize_t n = ::send(fd, reply.data() + sent, reply.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;
    sent += static_cast<std::size_t>(n);
  }
}

}  // namespace chaosbench::test

#include "bench/load/trivial_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

namespace chaosbench::bench::load {
namespace {

constexpr std::string_view kAnswer = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The length of the first complete request in `data` (head plus Content-Length body), or 0.
std::size_t request_length(std::string_view data) {
  const auto head_end = data.find("\r\n\r\n");
  if (head_end == std::string_view::npos) return 0;
  std::size_t body = 0;
  for (auto pos = data.find("\r\n"); pos < head_end; pos = data.find("\r\n", pos + 2)) {
    const auto line = data.substr(pos + 2, head_end - pos - 2);
    if (line.size() > 15 && strncasecmp(line.data(), "content-length:", 15) == 0)
      body = std::strtoul(std::string(line.substr(15, line.find("\r\n") - 15)).c_str(), nullptr, 10);
  }
  const auto total = head_end + 4 + body;
  return data.size() >= total ? total : 0;
}

}  // namespace

TrivialServer::TrivialServer(TrivialServerOptions options) : options_(std::move(options)) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  const int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(options_.port);
  if (inet_pton(AF_INET, options_.host.c_str(), &address.sin_addr) != 1 ||
      ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || ::listen(listen_fd_, 1024) != 0) {
    ::close(listen_fd_);
    throw std::runtime_error("trivial server: cannot listen on " + options_.host + ":" + std::to_string(options_.port));
  }
  socklen_t length = sizeof address;
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length);
  port_ = ntohs(address.sin_port);
  for (int i = 0; i < std::max(1, options_.threads); ++i) threads_.emplace_back([this] { serve(); });
}

TrivialServer::~TrivialServer() {
  stopping_ = true;
  for (auto& t : threads_) t.join();
  ::close(listen_fd_);
}

void TrivialServer::hold_if_stalled() {
  if (options_.stall_after <= 0) return;
  const auto n = requests_.fetch_add(1) + 1;
  if (n == options_.stall_after) stall_until_ns_ = steady_ns() + std::chrono::nanoseconds(options_.stall).count();
  const auto until = stall_until_ns_.load();
  const auto now = steady_ns();
  if (until > now) std::this_thread::sleep_for(std::chrono::nanoseconds(until - now));
}

void TrivialServer::answer(int fd, std::string& buffer) {
  std::string out;
  std::size_t done = 0;
  while (const auto n = request_length(std::string_view(buffer).substr(done))) {
    done += n;
    if (options_.stall_after > 0) hold_if_stalled();
    else requests_.fetch_add(1, std::memory_order_relaxed);
    if (options_.respond) out += kAnswer;
  }
  buffer.erase(0, done);
  if (!out.empty()) [[maybe_unused]] auto r = ::send(fd, out.data(), out.size(), MSG_NOSIGNAL);
}

void TrivialServer::serve() {
  const int epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLEXCLUSIVE;
  ev.data.fd = listen_fd_;
  epoll_ctl(epoll_fd, EPOLL_CTL_ADD, listen_fd_, &ev);
  std::unordered_map<int, std::string> buffers;
  epoll_event events[128];
  char chunk[16384];
  while (!stopping_) {
    const int n = epoll_wait(epoll_fd, events, 128, 50);
    for (int i = 0; i < n; ++i) {
      const int fd = events[i].data.fd;
      if (fd == listen_fd_) {
        const int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (client < 0) continue;
        const int one = 1;
        setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        epoll_event cev{};
        cev.events = EPOLLIN;
        cev.data.fd = client;
        epoll_ctl(epoll_fd, EPOLL_CTL_ADD, client, &cev);
        buffers[client];
        continue;
      }
      const auto got = ::recv(fd, chunk, sizeof chunk, 0);
      if (got <= 0) {
        ::close(fd);
        buffers.erase(fd);
        continue;
      }
      auto& buffer = buffers[fd];
      buffer.append(chunk, static_cast<std::size_t>(got));
      answer(fd, buffer);
    }
  }
  for (auto& [fd, buffer] : buffers) ::close(fd);
  ::close(epoll_fd);
}

}  // namespace chaosbench::bench::load

// A raw HTTP server on 127.0.0.1 for tests of HTTP clients that must misbehave on cue:
// it answers every request (read to its blank line and Content-Length body) with the same
// canned bytes, which may be anything (garbage, a cut answer, broken chunking), or holds
// every request unanswered; it closes a connection after a given number of answers (or
// never), and counts the connections it accepted. And a loopback port where nothing
// listens, for refused connects.
// Header-only, as the other fixtures of a single test executable are (llm_load_fixture.h).
// Threads: the server serves on a thread of its own; accepted() is safe from any thread.
// The destructor stops the thread and closes every socket, so a failing test leaves
// nothing behind.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace chaosbench::test {

class ScriptedHttpServer {
 public:
  // `reply`: the bytes every request gets (empty: none, the request is held).
  // `answers_per_connection`: close a connection after this many answers (0: never).
  // Throws std::system_error when it cannot listen.
  explicit ScriptedHttpServer(std::string reply, int answers_per_connection = 0);
  ~ScriptedHttpServer();
  ScriptedHttpServer(const ScriptedHttpServer&) = delete;
  ScriptedHttpServer& operator=(const ScriptedHttpServer&) = delete;

  unsigned short port() const { return port_; }
  int accepted() const { return accepted_.load(); }

 private:
  struct Client {
    int fd;
    std::string in;
    int answered = 0;
  };
  void serve();
  void serve_client(Client& client);

  std::string reply_;
  int per_connection_;
  int listen_fd_ = -1;
  unsigned short port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::vector<Client> clients_;  // the server thread's
  std::thread thread_;
};

namespace scripted_http_detail {

// A TCP socket bound to 127.0.0.1 on any free port; its port in `port`.
inline int bind_loopback(unsigned short& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    const int err = errno;
    if (fd >= 0) ::close(fd);
    throw std::system_error(err, std::generic_category(), "bind 127.0.0.1");
  }
  port = ntohs(a.sin_port);
  return fd;
}

}  // namespace scripted_http_detail

inline ScriptedHttpServer::ScriptedHttpServer(std::string reply, int answers_per_connection)
    : reply_(std::move(reply)), per_connection_(answers_per_connection) {
  listen_fd_ = scripted_http_detail::bind_loopback(port_);
  if (::listen(listen_fd_, 64) != 0) {
    const int err = errno;
    ::close(listen_fd_);
    throw std::system_error(err, std::generic_category(), "listen");
  }
  thread_ = std::thread([this] { serve(); });
}

inline ScriptedHttpServer::~ScriptedHttpServer() {
  stop_ = true;
  thread_.join();
  for (auto& c : clients_) ::close(c.fd);
  ::close(listen_fd_);
}

inline void ScriptedHttpServer::serve() {
  while (!stop_) {
    std::vector<pollfd> fds{{listen_fd_, POLLIN, 0}};
    for (const auto& c : clients_) fds.push_back({c.fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), 10) <= 0) continue;
    if (fds[0].revents & POLLIN) {
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) {
        clients_.push_back({fd, {}, 0});
        ++accepted_;
      }
    }
    for (std::size_t i = 1; i < fds.size(); ++i)
      if (fds[i].revents) serve_client(clients_[i - 1]);
    std::erase_if(clients_, [](const Client& c) { return c.fd < 0; });
  }
}

inline void ScriptedHttpServer::serve_client(Client& c) {
  char buf[4096];
  const auto n = ::recv(c.fd, buf, sizeof buf, 0);
  if (n <= 0) {
    ::close(c.fd);
    c.fd = -1;
    return;
  }
  c.in.append(buf, static_cast<std::size_t>(n));
  for (;;) {
    const auto head_end = c.in.find("\r\n\r\n");
    if (head_end == std::string::npos) return;
    const auto cl = c.in.find("Content-Length: ");
    const std::size_t length = cl == std::string::npos || cl > head_end ? 0 : std::stoul(c.in.substr(cl + 16));
    if (c.in.size() < head_end + 4 + length) return;
    c.in.erase(0, head_end + 4 + length);
    if (reply_.empty()) continue;  // held
    ::send(c.fd, reply_.data(), reply_.size(), MSG_NOSIGNAL);
    if (per_connection_ > 0 && ++c.answered >= per_connection_) {
      ::close(c.fd);
      c.fd = -1;
      return;
    }
  }
}

// A port on 127.0.0.1 where nothing listens (bound, then closed): a connect is refused.
inline unsigned short closed_loopback_port() {
  unsigned short port = 0;
  ::close(scripted_http_detail::bind_loopback(port));
  return port;
}

}  // namespace chaosbench::test

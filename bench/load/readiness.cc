#include "bench/load/readiness.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <thread>

namespace chaosbench::bench::load {
namespace {

// One GET `path`; true on a 200 status line.
bool ready(const http::HttpClientEndpoint& e, const std::string& path) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(e.host.c_str(), std::to_string(e.port).c_str(), &hints, &found) != 0) return false;
  bool ok = false;
  int fd = ::socket(found->ai_family, found->ai_socktype | SOCK_CLOEXEC, 0);
  if (fd >= 0) {
    timeval tv{0, 500000};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    if (::connect(fd, found->ai_addr, found->ai_addrlen) == 0) {
      const std::string request = "GET " + path + " HTTP/1.1\r\nHost: " + e.text() + "\r\nConnection: close\r\n\r\n";
      if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size())) {
        char buf[64] = {};
        const ssize_t n = ::recv(fd, buf, sizeof(buf) - 1, 0);
        ok = n >= 12 && std::strncmp(buf, "HTTP/1.1 200", 12) == 0;
      }
    }
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return ok;
}

}  // namespace

std::vector<std::string> wait_until_ready(const std::vector<http::HttpClientEndpoint>& endpoints,
                                          std::chrono::milliseconds limit, const std::vector<std::string>& paths) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::vector<http::HttpClientEndpoint> pending = endpoints;
  while (!pending.empty()) {
    std::vector<http::HttpClientEndpoint> still;
    for (const auto& e : pending)
      if (std::none_of(paths.begin(), paths.end(), [&](const std::string& p) { return ready(e, p); })) still.push_back(e);
    pending = std::move(still);
    if (pending.empty() || std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::vector<std::string> out;
  for (const auto& e : pending) out.push_back(e.text());
  return out;
}

}  // namespace chaosbench::bench::load

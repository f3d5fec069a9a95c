#include "bench/load/readiness.h"

#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <thread>

#include "bench/http/http_response_reader.h"

namespace chaosbench::bench::load {
namespace {

constexpr auto kProbeLimit = std::chrono::seconds(1);  // a server trickling its head is not ready

// The status of GET `path`'s answer on `fd`, read until its head is parsed; 0 when none came.
int status_of(int fd, const http::HttpClientEndpoint& e, const std::string& path) {
  const std::string request = "GET " + path + " HTTP/1.1\r\nHost: " + e.text() + "\r\nConnection: close\r\n\r\n";
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) return 0;
  http::HttpResponseReader response;
  const auto until = std::chrono::steady_clock::now() + kProbeLimit;
  char buf[4096];
  while (!response.head_done() && response.state() != http::HttpResponseReader::State::kError &&
         std::chrono::steady_clock::now() < until) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return 0;
    response.feed({buf, static_cast<std::size_t>(n)}, [](std::string_view) {});
  }
  return response.head_done() ? response.status() : 0;
}

// One GET `path`; true on a 200 answer.
bool ready(const http::HttpClientEndpoint& e, const std::string& path) {
  http::HttpClientEndpoint::Address address;
  try {
    address = e.resolve();
  } catch (const std::runtime_error&) {
    return false;
  }
  const int fd = ::socket(address.get()->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  timeval tv{0, 500000};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  const bool ok = ::connect(fd, address.get(), address.length) == 0 && status_of(fd, e, path) == 200;
  ::close(fd);
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

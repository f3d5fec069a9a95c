// The smallest useful HTTP/1.1 server: every request, whatever its method, path or body,
// gets "HTTP/1.1 200 OK" with the body "{}". Keep-alive, epoll, a few threads sharing one
// listening socket. The yardstick endpoint for the load generator (perf/workloads/load_vs_wrk.sh,
// perf/programs/trivial_http_server.cc) and its tests, which can also make it stall once
// or never answer.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace chaosbench::bench::load {

struct TrivialServerOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;  // 0: any free port (see TrivialServer::port())
  int threads = 2;
  bool respond = true;  // false: read requests and never answer (timeouts)
  // After this many requests (0: never), hold every answer for `stall`, once.
  std::int64_t stall_after = 0;
  std::chrono::milliseconds stall{0};
};

class TrivialServer {
 public:
  // Binds and listens, then serves on background threads until destroyed. Throws
  // std::runtime_error when it cannot bind.
  explicit TrivialServer(TrivialServerOptions options);
  ~TrivialServer();
  TrivialServer(const TrivialServer&) = delete;
  TrivialServer& operator=(const TrivialServer&) = delete;

  std::uint16_t port() const { return port_; }
  std::string url() const { return "http://" + options_.host + ":" + std::to_string(port_); }
  std::int64_t requests() const { return requests_.load(); }

 private:
  void serve();
  void answer(int fd, std::string& buffer);
  void hold_if_stalled();

  TrivialServerOptions options_;
  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<std::int64_t> requests_{0};
  std::atomic<std::int64_t> stall_until_ns_{0};
  std::vector<std::thread> threads_;
};

}  // namespace chaosbench::bench::load

// A tiny HTTP/1.1 server for tests of HTTP clients (probes, scrapes): canned answers
// chosen by the request target, one connection at a time, on 127.0.0.1 of this network
// namespace or of a given one. Every answer closes its connection.
// Threads: the server answers on a thread of its own; the methods are safe from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace chaosbench::test {

struct StubAnswer {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  std::chrono::milliseconds delay{0};  // before answering (a slow server)
};

class StubHttpServer {
 public:
  // `answer` gets the request target ("/api/v1/query?query=up"). netns_fd >= 0: listens
  // in that namespace (its loopback must be up). Throws std::system_error when it cannot listen.
  explicit StubHttpServer(std::function<StubAnswer(const std::string& target)> answer, int netns_fd = -1);
  ~StubHttpServer();  // stops answering; a delayed answer is cut short
  StubHttpServer(const StubHttpServer&) = delete;
  StubHttpServer& operator=(const StubHttpServer&) = delete;

  unsigned short port() const { return port_; }
  std::vector<std::string> targets() const;  // the targets requested so far, in order

 private:
  void serve();
  void answer_one(int fd);

  std::function<StubAnswer(const std::string&)> answer_;
  int listen_fd_ = -1;
  int stop_fd_ = -1;  // an eventfd: written once to stop
  unsigned short port_ = 0;
  mutable std::mutex mutex_;
  std::vector<std::string> targets_;
  std::thread thread_;
};

}  // namespace chaosbench::test

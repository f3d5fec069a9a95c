// Issue 15, the inference server against hostile clients, through a real `worker serve`
// process (so a crash shows as a failed check, not a dead test binary): deep JSON, floods
// of stalled bodies, descriptor exhaustion, slow senders and oversized headers.
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <iostream>
#include <thread>
#include <vector>

#include "bench/protocol/record.h"
#include "http_test_client.h"
#include "serve_process.h"

namespace serve_hardening_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::test;
using namespace std::chrono_literals;

namespace {

// A shape nested `depth` deep: [[[...]]], about 2 x depth bytes.
std::string deep_infer_body(std::size_t depth) {
  return R"({"inputs":[{"name":"input","datatype":"FP32","data":[],"shape":)" + std::string(depth, '[') +
         std::string(depth, ']') + "}]}";
}

// Closes every descriptor on scope exit, also when a REQUIRE fails.
struct Sockets {
  std::vector<int> fds;
  ~Sockets() { close_all(); }
  void close_all() {
    for (int fd : fds) ::close(fd);
    fds.clear();
  }
};

}  // namespace

TEST_CASE("serve-hardening: a 100,000-deep shape gets a 400 that does not echo it", "[serve-hardening]") {
  ServeProcess server;
  const auto reply = http_request(server.port(), "POST", "/v2/models/mlp/infer", deep_infer_body(100'000));
  INFO(server.log());
  REQUIRE(server.alive());
  CHECK(reply.status == 400);
  CHECK(reply.body.size() < 512);
  CHECK(reply.body.find("[[") == std::string::npos);
  CHECK_THAT(reply.body, Catch::Contains("nests deeper"));
  // Shallow but wrong: the message says what was expected, never what was sent.
  const auto wrong = http_request(server.port(), "POST", "/v2/models/mlp/infer", deep_infer_body(3));
  CHECK(wrong.status == 400);
  CHECK_THAT(wrong.body, Catch::Contains("inputs[0].shape: expected an array of 2 integers [n, 8]"));
  CHECK(wrong.body.find("[[") == std::string::npos);
  CHECK(http_request(server.port(), "GET", "/v2/health/live").status == 200);
}

TEST_CASE("serve-hardening: a protocol line nested 100,000 deep is malformed, not parsed", "[serve-hardening]") {
  const std::string line = R"({"type":"sample","rank":0,"name":"x","value":1,"labels":{"a":)" +
                           std::string(100'000, '[') + std::string(100'000, ']') + "}}";
  const auto decoded = chaosbench::bench::decode_record(line);
  CHECK_FALSE(decoded.ok);
  CHECK_THAT(decoded.error, Catch::Contains("nests deeper"));
}

TEST_CASE("serve-hardening: 400 stalled 1 MB bodies do not grow the server past its buffer budget",
          "[serve-hardening]") {
  ServeProcess server;  // the defaults: 512 connections, 64 MiB buffered
  const long rss_before = server.rss_kb();
  Sockets flood;
  const std::string head = "POST /v2/models/mlp/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\n";
  const std::string chunk(64 * 1024, ' ');
  std::vector<std::size_t> sent;
  for (int i = 0; i < 400; ++i) {
    const int fd = connect_local(server.port(), 20ms);  // short: a full socket buffer must not block the flood
    if (fd < 0) break;
    flood.fds.push_back(fd);
    sent.push_back(send_all(fd, head) ? 0 : SIZE_MAX);
  }
  // Up to 1,000,000 of the declared 1,048,576 bytes each, round robin, until the server
  // takes no more for a second; then stall.
  const auto until = std::chrono::steady_clock::now() + 10s;
  auto last_progress = std::chrono::steady_clock::now();
  std::size_t total = 0;
  while (std::chrono::steady_clock::now() < std::min(until, last_progress + 1s)) {
    for (std::size_t i = 0; i < flood.fds.size(); ++i) {
      if (sent[i] >= 1'000'000) continue;
      const auto n = ::send(flood.fds[i], chunk.data(), std::min(chunk.size(), 1'000'000 - sent[i]),
                            MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) sent[i] += static_cast<std::size_t>(n), total += static_cast<std::size_t>(n);
      if (n > 0) last_progress = std::chrono::steady_clock::now();
      else if (n < 0 && errno != EAGAIN) sent[i] = SIZE_MAX;  // refused and closed by the server
    }
    std::this_thread::sleep_for(1ms);
  }
  std::this_thread::sleep_for(500ms);
  REQUIRE(server.alive());
  const long rss_after = server.rss_kb();
  std::cout << "flood: " << flood.fds.size() << " connections, " << total / (1 << 20) << " MiB sent, server RSS " << rss_before / 1024 << " MiB before, "
            << rss_after / 1024 << " MiB after\n";
  CHECK(rss_after - rss_before < 128 * 1024);
  // While flooded, a normal request is still served.
  CHECK(http_request(server.port(), "GET", "/v2/health/live").status == 200);
  flood.close_all();
  CHECK(http_request(server.port(), "GET", "/v2/health/ready").status == 200);
}

TEST_CASE("serve-hardening: out of descriptors the server idles, then serves again", "[serve-hardening]") {
  ServeProcess server({}, 64);
  Sockets held;
  for (int i = 0; i < 150; ++i) {
    const int fd = connect_local(server.port(), 200ms);  // the backlog takes what accept() cannot
    if (fd >= 0) held.fds.push_back(fd);
  }
  std::this_thread::sleep_for(300ms);
  const double cpu_before = server.cpu_seconds();
  std::this_thread::sleep_for(2s);
  const double cpu_used = server.cpu_seconds() - cpu_before;
  std::cout << "out of descriptors: " << held.fds.size() << " connections held, server CPU " << cpu_used
            << " s in 2 s\n";
  REQUIRE(server.alive());
  CHECK(cpu_used < 0.3);
  held.close_all();
  int status = 0;
  for (int i = 0; i < 50 && status != 200; ++i) {
    status = http_request(server.port(), "GET", "/v2/health/live").status;
    if (status != 200) std::this_thread::sleep_for(100ms);
  }
  CHECK(status == 200);
}

TEST_CASE("serve-hardening: slow senders get 408, big headers 431, too many connections 503", "[serve-hardening][slow]") {
  ServeProcess server({"--request-timeout", "1s", "--max-connections", "8"});
  Sockets s;
  for (const std::string& partial : {std::string("GET /v2/hea"),
                                    std::string("POST /v2/models/mlp/infer HTTP/1.1\r\nContent-Length: 100\r\n\r\n{")}) {
    const int fd = connect_local(server.port());
    REQUIRE(fd >= 0);
    s.fds.push_back(fd);
    REQUIRE(send_all(fd, partial));
    const auto start = std::chrono::steady_clock::now();
    std::string pending;
    const auto reply = read_reply(fd, pending);
    CHECK(reply.status == 408);
    CHECK(std::chrono::steady_clock::now() - start < 3s);
    CHECK(wait_closed(fd));
  }
  s.close_all();
  const int fd = connect_local(server.port());
  REQUIRE(fd >= 0);
  s.fds.push_back(fd);
  send_all(fd, "GET /v2/health/live HTTP/1.1\r\nX-Big: " + std::string(64 * 1024, 'a') + "\r\n\r\n");
  std::string pending;
  CHECK(read_reply(fd, pending).status == 431);
  s.close_all();
  std::this_thread::sleep_for(300ms);  // the server sees those closes and frees their slots
  for (int i = 0; i < 8; ++i) s.fds.push_back(connect_local(server.port()));
  std::this_thread::sleep_for(200ms);
  const auto refused = http_request(server.port(), "GET", "/v2/health/live");
  CHECK(refused.status == 503);
  CHECK_THAT(refused.body, Catch::Contains("connections"));
  s.close_all();
  std::this_thread::sleep_for(200ms);
  CHECK(http_request(server.port(), "GET", "/v2/health/live").status == 200);
}

TEST_CASE("serve-hardening: --max-batch-size and the HTTP limits are bounded with a usage error",
          "[serve-hardening]") {
  for (const auto& [flag, value] : std::vector<std::pair<std::string, std::string>>{
           {"--max-batch-size", "100000000"}, {"--max-connections", "0"}, {"--max-buffered", "1"},
           {"--request-timeout", "0s"}}) {
    const auto r = run_command({binary(), "worker", "serve", "--port", "0", flag, value}, 10s);
    INFO(flag << " " << value << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(flag));
  }
}

}  // namespace serve_hardening_test

// The HTTP server core the three servers share (bench/http/http_server_core.h), in-process
// with a test handler: a request handed over whole, keep-alive and pipelining, HTTP/1.0,
// the limits the core answers itself (400, 408, 413, 431, 503) and the idle close, the
// connection and buffer budgets, streamed answers, a client leaving mid-answer, a
// half-closed client still answered, a handler that throws, and stop().
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench/http/http_server_core.h"
#include "http_test_client.h"

namespace http_server_core_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::bench::http;
using chaosbench::test::connect_local;
using chaosbench::test::read_reply;
using chaosbench::test::request_text;
using chaosbench::test::send_all;
using chaosbench::test::wait_closed;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

struct TestHandler final : ServerHandler {
  std::function<void(ServerRequest, const ServerExchange&)> on_request = [](ServerRequest r, const ServerExchange& ex) {
    ex.respond({200, "text/plain", r.method + " " + r.target + " " + r.body});
  };
  void handle(ServerRequest request, const ServerExchange& exchange) override { on_request(std::move(request), exchange); }
  ServerResponse transport_error(int status, const std::string& message) override {
    return {status, "text/plain", message};
  }
};

struct Served {
  explicit Served(ServerConfig cfg = {}) : core(std::move(cfg), handler) {}
  unsigned short start() { return core.start(); }
  TestHandler handler;
  HttpServerCore core;
};

// Everything the server sends until it closes (or 5 s pass).
std::string read_all(int fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    const auto n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return out;
    out.append(buf, static_cast<std::size_t>(n));
  }
}

bool eventually(const std::function<bool()>& ok, std::chrono::milliseconds limit = 2s) {
  for (const auto end = Clock::now() + limit; Clock::now() < end; std::this_thread::sleep_for(2ms))
    if (ok()) return true;
  return ok();
}

}  // namespace

TEST_CASE("http-server: requests are handed over whole, with keep-alive, pipelining and HTTP/1.0", "[http-server]") {
  Served s;
  const auto port = s.start();
  const int fd = connect_local(port);
  REQUIRE(fd >= 0);
  // Two requests in one write, the second's body chunked: both answered in order.
  REQUIRE(send_all(fd, request_text("POST", "/a?x=1", "one") +
                           "POST /b HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n3\r\ntwo\r\n0\r\n\r\n"));
  std::string pending;
  const auto first = read_reply(fd, pending);
  CHECK(first.status == 200);
  CHECK(first.body == "POST /a?x=1 one");
  CHECK_FALSE(first.closed);
  const auto second = read_reply(fd, pending);
  CHECK(second.body == "POST /b two");
  // Many in a row, each sent the moment the last answer arrives: the next request may
  // come while the last answer's write is still completing.
  int echoed = 0;
  for (int i = 0; i < 500; ++i) {
    const std::string body(static_cast<std::size_t>(i % 97), static_cast<char>('a' + i % 26));
    if (!send_all(fd, request_text("PUT", "/n" + std::to_string(i), body))) break;
    echoed += read_reply(fd, pending).body == "PUT /n" + std::to_string(i) + " " + body;
  }
  CHECK(echoed == 500);
  ::close(fd);
  // HTTP/1.0 without keep-alive: the answer is HTTP/1.0 and the connection closes.
  const int old = connect_local(port);
  REQUIRE(send_all(old, "GET /c HTTP/1.0\r\n\r\n"));
  const std::string all = read_all(old);
  ::close(old);
  CHECK(all.starts_with("HTTP/1.0 200 OK\r\n"));
  CHECK(all.find("Server: chaosbench\r\n") != std::string::npos);
  CHECK(all.find("Connection: close\r\n") != std::string::npos);
  CHECK(all.ends_with("\r\n\r\nGET /c "));
}

TEST_CASE("http-server: the core answers 400, 413, 431 and 408 itself, then closes, and idle connections close",
          "[http-server]") {
  ServerConfig cfg;
  cfg.header_limit = 1024;
  cfg.body_limit = 100;
  cfg.request_timeout = 300ms;
  cfg.idle_timeout = 500ms;
  Served s(cfg);
  std::atomic<int> handled{0};
  s.handler.on_request = [&](ServerRequest, const ServerExchange& ex) {
    ++handled;
    ex.respond({200, "text/plain", "ok"});
  };
  const auto port = s.start();
  auto status_of = [&](const std::string& bytes, bool half_close = false) {
    const int fd = connect_local(port);
    REQUIRE(fd >= 0);
    send_all(fd, bytes);
    if (half_close) ::shutdown(fd, SHUT_WR);
    std::string pending;
    const auto reply = read_reply(fd, pending);
    CHECK(reply.closed);
    CHECK(wait_closed(fd));
    ::close(fd);
    return reply.status;
  };
  CHECK(status_of("NOT HTTP AT ALL\r\n\r\n") == 400);
  CHECK(status_of("GET /cut HTTP/1.1\r\nHost:", true) == 400);  // the request ended at the close
  CHECK(status_of(request_text("POST", "/big", std::string(101, 'x'))) == 413);
  CHECK(status_of("POST /big HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n65\r\n" + std::string(101, 'x') + "\r\n0\r\n\r\n") ==
        413);
  CHECK(status_of("GET / HTTP/1.1\r\nX-Big: " + std::string(2000, 'a') + "\r\n\r\n") == 431);
  const auto slow_start = Clock::now();
  CHECK(status_of("POST /slow HTTP/1.1\r\nContent-Length: 10\r\n\r\n12345") == 408);
  CHECK(Clock::now() - slow_start >= 280ms);
  CHECK(handled == 0);
  // Idle: closed after idle_timeout, not before; a request in time is answered.
  const int idle = connect_local(port);
  const auto idle_start = Clock::now();
  CHECK(wait_closed(idle));
  CHECK(Clock::now() - idle_start >= 450ms);
  ::close(idle);
  CHECK(chaosbench::test::http_request(port, "GET", "/").status == 200);
}

TEST_CASE("http-server: over the buffer budget 503, over max_connections 503 or a close with max_refusing 0",
          "[http-server]") {
  ServerConfig cfg;
  cfg.body_limit = 800;
  cfg.max_buffered = 1000;
  cfg.max_connections = 2;
  auto refusing = GENERATE(std::size_t{64}, std::size_t{0});
  cfg.max_refusing = refusing;
  Served s(cfg);
  const auto port = s.start();
  // A stalled 800-byte body holds 800 of the 1000 buffered bytes: the next one is refused.
  const int stalled = connect_local(port);
  REQUIRE(send_all(stalled, "POST /x HTTP/1.1\r\nContent-Length: 800\r\n\r\nabc"));
  std::this_thread::sleep_for(100ms);
  const int second = connect_local(port);
  REQUIRE(send_all(second, "POST /y HTTP/1.1\r\nContent-Length: 800\r\n\r\nabc"));
  std::string pending;
  const auto over_budget = read_reply(second, pending);
  CHECK(over_budget.status == 503);
  CHECK(over_budget.body.find("buffers 1000 bytes") != std::string::npos);
  ::close(second);
  std::this_thread::sleep_for(100ms);
  const int other = connect_local(port);  // the second slot
  std::this_thread::sleep_for(100ms);
  const int third = connect_local(port);
  REQUIRE(third >= 0);
  send_all(third, request_text("GET", "/", ""));
  pending.clear();
  const auto refused = read_reply(third, pending);
  CHECK(refused.status == (refusing > 0 ? 503 : 0));
  if (refusing > 0) CHECK(refused.body.find("too many connections") != std::string::npos);
  ::close(third);
  ::close(other);
  ::close(stalled);
  CHECK(eventually([&] { return chaosbench::test::http_request(port, "GET", "/").status == 200; }));
}

TEST_CASE("http-server: a streamed answer is chunked on HTTP/1.1, raw on HTTP/1.0, and ends delivered", "[http-server]") {
  Served s;
  std::atomic<int> delivered{-1};
  std::mutex mu;
  std::vector<std::thread> engines;
  s.handler.on_request = [&](ServerRequest, const ServerExchange& ex) {
    ex.on_finished([&](bool d) { delivered = d; });
    ex.begin_stream(200, "text/event-stream");
    std::lock_guard lock(mu);
    engines.emplace_back([ex] {  // later, from another thread, as an engine would
      ex.stream("data: a\n\n");
      ex.stream("");  // skipped: an empty chunk would end the body
      ex.stream("data: bb\n\n");
      ex.end_stream("data: [DONE]\n\n");
      ex.stream("late");  // the answer is over: nothing
    });
  };
  const auto port = s.start();
  const int fd = connect_local(port);
  REQUIRE(send_all(fd, "GET /s HTTP/1.1\r\nConnection: close\r\n\r\n"));
  const std::string chunked = read_all(fd);
  ::close(fd);
  CHECK(chunked.find("HTTP/1.1 200 OK\r\n") == 0);
  CHECK(chunked.find("Content-Type: text/event-stream\r\n") != std::string::npos);
  CHECK(chunked.find("Transfer-Encoding: chunked\r\n") != std::string::npos);
  CHECK(chunked.ends_with("\r\n\r\n9\r\ndata: a\n\n\r\na\r\ndata: bb\n\n\r\ne\r\ndata: [DONE]\n\n\r\n0\r\n\r\n"));
  CHECK(eventually([&] { return delivered == 1; }));
  delivered = -1;
  const int old = connect_local(port);
  REQUIRE(send_all(old, "GET /s HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"));
  const std::string raw = read_all(old);  // no chunks, so the close ends the body
  ::close(old);
  CHECK(raw.find("Transfer-Encoding") == std::string::npos);
  CHECK(raw.find("Connection: close\r\n") != std::string::npos);
  CHECK(raw.ends_with("\r\n\r\ndata: a\n\ndata: bb\n\ndata: [DONE]\n\n"));
  CHECK(eventually([&] { return delivered == 1; }));
  std::lock_guard lock(mu);
  for (auto& t : engines) t.join();
}

TEST_CASE("http-server: a client that leaves mid-answer is heard at once, and a half-closed one is still answered",
          "[http-server]") {
  Served s;
  std::mutex mu;
  std::optional<ServerExchange> held;
  std::atomic<int> delivered{-1};
  s.handler.on_request = [&](ServerRequest r, const ServerExchange& ex) {
    if (r.target == "/watch") {
      ex.on_finished([&](bool d) { delivered = d; });
      ex.begin_stream(200, "text/event-stream");
    }
    std::lock_guard lock(mu);
    held = ex;  // answered (or not) later
  };
  const auto port = s.start();
  const int fd = connect_local(port);
  REQUIRE(send_all(fd, request_text("GET", "/watch", "")));
  char buf[512];
  REQUIRE(::recv(fd, buf, sizeof buf, 0) > 0);  // the head
  ::close(fd);
  CHECK(eventually([&] { return delivered == 0; }, 1s));
  // No callback: a client that only stopped sending still gets its answer.
  const int half = connect_local(port);
  REQUIRE(send_all(half, request_text("GET", "/later", "")));
  ::shutdown(half, SHUT_WR);
  std::this_thread::sleep_for(100ms);
  {
    std::lock_guard lock(mu);
    REQUIRE(held);
    held->respond({200, "text/plain", "late but whole"});
  }
  std::string pending;
  const auto reply = read_reply(half, pending);
  CHECK(reply.status == 200);
  CHECK(reply.body == "late but whole");
  CHECK(wait_closed(half));
  ::close(half);
  std::lock_guard lock(mu);
  held.reset();
}

TEST_CASE("http-server: a handler that throws is a 500, and stop() closes the listener and every connection",
          "[http-server]") {
  Served s;
  s.handler.on_request = [](ServerRequest r, const ServerExchange& ex) {
    if (r.target == "/throw") throw std::runtime_error("boom");
    if (r.target == "/never") return;  // kept open: stop() must cut it
    ex.respond({200, "text/plain", "fine"});
  };
  const auto port = s.start();
  const auto thrown = chaosbench::test::http_request(port, "GET", "/throw");
  CHECK(thrown.status == 500);
  CHECK(thrown.body.find("boom") != std::string::npos);
  CHECK(chaosbench::test::http_request(port, "GET", "/").status == 200);
  const int waiting = connect_local(port);
  REQUIRE(send_all(waiting, request_text("GET", "/never", "")));
  std::this_thread::sleep_for(100ms);
  s.core.stop();
  s.core.stop();  // idempotent
  CHECK(wait_closed(waiting));
  ::close(waiting);
  CHECK(connect_local(port, 200ms) < 0);
  // Binding a port in use names it.
  Served first;
  const auto taken = first.start();
  ServerConfig cfg;
  cfg.name = "test";
  cfg.port = taken;
  Served second(cfg);
  CHECK_THROWS_WITH(second.start(), Catch::Contains("test: cannot listen on 127.0.0.1:" + std::to_string(taken)));
}

}  // namespace http_server_core_test

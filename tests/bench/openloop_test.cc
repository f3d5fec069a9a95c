// The open-loop engine (bench/openloop/) and the HTTP client core under it (bench/http/)
// on loopback, with test exchanges that record how each request ended: fixed pools and
// their queues, keep-alive reuse and the resend after an idle close, chunked answers,
// failover on a refused connect (the endpoint then skipped), on a 5xx when the exchange
// asks, on a timeout per attempt but not past a request's deadline, cut and malformed
// answers, and a stop that cancels or drains. The load generators' own tests
// (load_test.cc, llm_load_test.cc, llm_load_robust_test.cc) drive it end to end.
#include <atomic>
#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/openloop/open_loop_engine.h"
#include "scripted_http_server.h"

namespace openloop_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

namespace http = chaosbench::bench::http;
namespace openloop = chaosbench::bench::openloop;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using Failure = openloop::OpenLoopExchange::Failure;
using chaosbench::test::closed_loopback_port;
using ScriptedServer = chaosbench::test::ScriptedHttpServer;

namespace {

const std::string kOk = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}";
const std::string k503 = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\nbusy";

// How one request ended, as its exchange saw it.
struct Outcome {
  int status = 0;  // of the last complete answer
  std::string body;
  std::vector<Failure> failures;  // every failed attempt's
  std::vector<std::size_t> endpoints;  // each attempt's
  bool sent = false, ended = false;
};

// Records everything into `out`; fails over on a 5xx, a refused connect and a timeout
// when the engine allows.
class RecordingExchange final : public openloop::OpenLoopExchange {
 public:
  RecordingExchange(Clock::time_point scheduled, Outcome& out) : OpenLoopExchange(scheduled), out_(out) {}
  std::string_view request(std::size_t endpoint) override {
    out_.endpoints.push_back(endpoint);
    return "GET /x HTTP/1.1\r\nHost: test\r\n\r\n";
  }
  void on_sent(Clock::time_point) override { out_.sent = true; }
  bool on_body(std::string_view piece, Clock::time_point) override {
    out_.body.append(piece);
    return true;
  }
  bool on_complete(const http::HttpResponseReader& response, bool can_fail_over, Clock::time_point) override {
    out_.status = response.status();
    if (response.status() >= 500) out_.body.clear();
    return can_fail_over && response.status() >= 500;
  }
  bool on_failure(Failure failure, std::string_view, bool can_fail_over, Clock::time_point) override {
    out_.failures.push_back(failure);
    return can_fail_over && failure != Failure::kMalformed && failure != Failure::kTruncated;
  }
  void on_end(Clock::time_point) override { out_.ended = true; }

 private:
  Outcome& out_;
};

// Submits `count` requests: all at the start, or one after another (each when the last ended).
class TestClient final : public openloop::OpenLoopClient {
 public:
  TestClient(int count, bool one_at_a_time) : outcomes_(static_cast<std::size_t>(count)), one_at_a_time_(one_at_a_time) {}
  Clock::time_point issue(openloop::OpenLoopEngine& engine, Clock::time_point now) override {
    while (next_ < outcomes_.size() && !(one_at_a_time_ && engine.outstanding() > 0))
      engine.submit(std::make_unique<RecordingExchange>(now, outcomes_[next_++]), now);
    return Clock::time_point::max();
  }
  const std::vector<Outcome>& outcomes() const { return outcomes_; }

 private:
  std::vector<Outcome> outcomes_;
  bool one_at_a_time_;
  std::size_t next_ = 0;
};

http::HttpClientEndpoint endpoint_of(const ScriptedServer& server) { return {"127.0.0.1", server.port()}; }

openloop::OpenLoopOptions options_for(std::vector<http::HttpClientEndpoint> endpoints) {
  openloop::OpenLoopOptions o;
  o.endpoints = std::move(endpoints);
  o.timeout = 2s;
  return o;
}

// Runs `client` on an engine of `options`, issuing for `issue_for`; returns its failovers.
std::int64_t run(const openloop::OpenLoopOptions& options, TestClient& client, Clock::duration issue_for = 300ms) {
  openloop::OpenLoopEngine engine(options);
  engine.run(client, Clock::now() + issue_for);
  CHECK(engine.outstanding() == 0);
  return engine.failovers();
}

}  // namespace

TEST_CASE("openloop load engine: a fixed pool keeps N connections alive and queues the rest", "[load]") {
  ScriptedServer server(kOk);
  auto options = options_for({endpoint_of(server)});
  options.connections_per_endpoint = 2;
  TestClient client(20, false);
  CHECK(run(options, client) == 0);
  for (const auto& o : client.outcomes()) {
    CHECK(o.ended);
    CHECK(o.status == 200);
    CHECK(o.body == "{}");
    CHECK(o.failures.empty());
  }
  CHECK(server.accepted() == 2);
}

TEST_CASE("openloop load engine: chunked answers are read whole, body pieces as they come", "[load]") {
  ScriptedServer server("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n");
  TestClient client(3, true);
  CHECK(run(options_for({endpoint_of(server)}), client) == 0);
  for (const auto& o : client.outcomes()) {
    CHECK(o.status == 200);
    CHECK(o.body == "abcde");
  }
  CHECK(server.accepted() == 1);  // kept alive
}

TEST_CASE("openloop load engine: a kept-alive socket the server closed is resent, not failed", "[load]") {
  ScriptedServer server(kOk, 1);  // says nothing of closing, closes after each answer
  TestClient client(5, true);
  CHECK(run(options_for({endpoint_of(server)}), client) == 0);
  for (const auto& o : client.outcomes()) {
    CHECK(o.status == 200);
    CHECK(o.failures.empty());
  }
  CHECK(server.accepted() >= 5);
}

TEST_CASE("openloop load engine: a refused connect fails over and the endpoint is skipped", "[load]") {
  ScriptedServer live(kOk);
  TestClient client(6, true);
  // The first request finds the closed endpoint; the rest go round it for a second.
  CHECK(run(options_for({{"127.0.0.1", closed_loopback_port()}, endpoint_of(live)}), client) == 1);
  const auto& first = client.outcomes().front();
  CHECK(first.failures == std::vector<Failure>{Failure::kConnect});
  CHECK(first.endpoints == std::vector<std::size_t>{0, 1});
  for (const auto& o : client.outcomes()) CHECK(o.status == 200);
}

TEST_CASE("openloop load engine: a 5xx goes to the next endpoint when the exchange asks, within the attempts",
          "[load]") {
  ScriptedServer busy(k503), live(kOk);
  SECTION("two attempts: every request is answered") {
    auto options = options_for({endpoint_of(busy), endpoint_of(live)});
    options.max_attempts = 2;
    TestClient client(4, true);
    CHECK(run(options, client) == 2);  // round robin: two of the four start at the busy one
    for (const auto& o : client.outcomes()) CHECK(o.status == 200);
  }
  SECTION("one attempt: the 5xx stands") {
    auto options = options_for({endpoint_of(busy), endpoint_of(live)});
    options.max_attempts = 1;
    TestClient client(2, true);
    CHECK(run(options, client) == 0);
    CHECK(client.outcomes()[0].status == 503);
    CHECK(client.outcomes()[1].status == 200);
  }
}

TEST_CASE("openloop load engine: a timeout fails over per attempt, never past the request's deadline", "[load]") {
  ScriptedServer silent(""), live(kOk);
  auto options = options_for({endpoint_of(silent), endpoint_of(live)});
  options.timeout = 100ms;
  SECTION("per attempt: the second endpoint answers") {
    options.timeout_per_attempt = true;
    TestClient client(1, true);
    CHECK(run(options, client) == 1);
    CHECK(client.outcomes()[0].failures == std::vector<Failure>{Failure::kTimeout});
    CHECK(client.outcomes()[0].status == 200);
  }
  SECTION("from the scheduled time: the request fails at its deadline") {
    TestClient client(1, true);
    CHECK(run(options, client) == 0);
    CHECK(client.outcomes()[0].failures == std::vector<Failure>{Failure::kTimeout});
    CHECK(client.outcomes()[0].status == 0);
  }
}

TEST_CASE("openloop load engine: cut and malformed answers are failures of their kind", "[load]") {
  ScriptedServer cut("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", 1);
  ScriptedServer garbage("HELLO THERE\r\n\r\n", 1);
  TestClient a(1, true), b(1, true);
  run(options_for({endpoint_of(cut)}), a);
  run(options_for({endpoint_of(garbage)}), b);
  CHECK(a.outcomes()[0].failures == std::vector<Failure>{Failure::kTruncated});
  CHECK(a.outcomes()[0].body == "abc");  // what came was handed on as it came
  CHECK(b.outcomes()[0].failures == std::vector<Failure>{Failure::kMalformed});
}

TEST_CASE("openloop load engine: a stop cancels what is in flight, or lets it drain", "[load]") {
  ScriptedServer silent("");
  std::atomic<bool> stop{false};
  auto options = options_for({endpoint_of(silent)});
  options.stop = &stop;
  options.drain_limit = 200ms;
  std::thread stopper([&] {
    std::this_thread::sleep_for(100ms);
    stop = true;
  });
  TestClient client(3, false);
  SECTION("cancel") {
    options.stop_cancels = true;
    const auto t0 = Clock::now();
    run(options, client, 10s);
    CHECK(Clock::now() - t0 < 1s);
    for (const auto& o : client.outcomes()) CHECK(o.failures == std::vector<Failure>{Failure::kCancelled});
  }
  SECTION("drain, bounded") {
    const auto t0 = Clock::now();
    run(options, client, 10s);
    CHECK(Clock::now() - t0 < 1500ms);
    for (const auto& o : client.outcomes()) CHECK(o.failures == std::vector<Failure>{Failure::kTimeout});
  }
  stopper.join();
}

}  // namespace openloop_test

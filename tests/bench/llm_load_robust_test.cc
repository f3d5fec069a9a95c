// The LLM load generator against servers that misbehave: a tiny raw TCP server on loopback
// answers every request with canned bytes (garbage, bad JSON in an event, broken chunked
// framing, a cut stream, a non-2xx status, a stream without [DONE]) or never answers.
// Each must be counted as its own kind of failure, never crash or hang; and a stop
// request must end a run at once with its streams counted as cancelled. And the records
// reach a metrics socket through the generator's writer thread.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include <catch2/catch.hpp>
#include <string>
#include <thread>

#include "llm_load_fixture.h"
#include "scripted_http_server.h"

namespace llm_load_robust_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::bench::llm;
using namespace std::chrono_literals;
using chaosbench::common::Duration;
using chaosbench::test::plan_for;
using chaosbench::test::run_plan;

namespace {

// Answers each request with the canned bytes, then closes; an empty reply never answers.
using CannedServer = chaosbench::test::ScriptedHttpServer;

std::string sse_head() { return "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"; }

std::string chunk(const std::string& data) {
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  return size + data + "\r\n";
}

const std::string kGoodEvent = R"(data: {"choices":[{"index":0,"text":" a","finish_reason":null}]})"
                               "\n\n";

LlmLoadResult run_against(const std::string& reply, std::chrono::milliseconds timeout = 2s) {
  CannedServer server(reply, 1);
  auto plan = plan_for({server.port()});
  plan.settings.arrival = Arrival::kConcurrency;
  plan.settings.concurrency = 1;
  plan.settings.duration = Duration{100ms};
  plan.settings.timeout = Duration{timeout};
  return run_plan(plan);
}

void check_only(const LlmLoadResult& r, const std::string& kind) {
  INFO(format_llm_load_summary(r));
  CHECK(r.completed == 0);
  REQUIRE(r.failed >= 1);
  CHECK(r.failures.size() == 1);
  CHECK(r.failures.count(kind) == 1);
}

}  // namespace

TEST_CASE("llm-load: a bad server's answers are counted by kind", "[llm-load]") {
  SECTION("garbage instead of HTTP") { check_only(run_against("HELLO THERE\r\n\r\n"), "malformed"); }
  SECTION("bad JSON in an event") {
    check_only(run_against(sse_head() + chunk(kGoodEvent) + chunk("data: {\"choices\": [\n\n") + "0\r\n\r\n"),
               "malformed");
  }
  SECTION("a broken chunk size") { check_only(run_against(sse_head() + chunk(kGoodEvent) + "zz\r\n"), "malformed"); }
  SECTION("cut in the middle of a chunk") {
    check_only(run_against(sse_head() + chunk(kGoodEvent) + "40\r\ndata: {"), "truncated");
  }
  SECTION("a whole response without [DONE]") {
    check_only(run_against(sse_head() + chunk(kGoodEvent) + "0\r\n\r\n"), "truncated");
  }
  SECTION("a non-2xx status") {
    check_only(run_against("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 2\r\n\r\nno"), "http_status");
  }
  SECTION("an error event") {
    check_only(run_against(sse_head() + chunk("data: {\"error\": {\"message\": \"overloaded\"}}\n\n") + "0\r\n\r\n"),
               "http_status");
  }
  SECTION("a server that never answers times out") {
    const auto t0 = std::chrono::steady_clock::now();
    check_only(run_against("", 300ms), "timeout");
    CHECK(std::chrono::steady_clock::now() - t0 < 2s);
  }
}

TEST_CASE("llm-load: a stop request cancels the streams in flight", "[llm-load]") {
  auto server = chaosbench::test::synthetic_server({2s, 10ms, 4});
  auto plan = plan_for({server->port()});
  plan.settings.arrival = Arrival::kConcurrency;
  plan.settings.concurrency = 3;
  plan.settings.duration = Duration{10s};
  chaosbench::bench::MetricsClient metrics;
  std::atomic<bool> stop{false};
  LlmLoadGenerator generator(plan, metrics, stop);
  std::thread stopper([&] {
    std::this_thread::sleep_for(200ms);
    stop = true;
  });
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = generator.run();
  stopper.join();
  CHECK(std::chrono::steady_clock::now() - t0 < 1s);
  CHECK(r.completed == 0);
  CHECK(r.failures.at("cancelled") == 3);
}

TEST_CASE("llm-load: records reach the metrics socket from the writer thread", "[llm-load]") {
  char dir[] = "/tmp/llm_load_metrics_XXXXXX";
  REQUIRE(::mkdtemp(dir) != nullptr);
  const std::string path = std::string(dir) + "/m.sock";
  struct Cleanup {
    std::string path, dir;
    ~Cleanup() {
      ::unlink(path.c_str());
      ::rmdir(dir.c_str());
    }
  } cleanup{path, dir};
  const int listen_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  REQUIRE(::bind(listen_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(listen_fd, 4) == 0);
  std::string received;
  std::thread reader([&] {  // one connection, read to its end
    const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    char buf[65536];
    for (ssize_t n; fd >= 0 && (n = ::read(fd, buf, sizeof buf)) > 0;) received.append(buf, static_cast<std::size_t>(n));
    if (fd >= 0) ::close(fd);
  });
  auto server = chaosbench::test::synthetic_server({5ms, 1ms, 4});
  auto plan = plan_for({server->port()});
  plan.settings.arrival = Arrival::kConcurrency;
  plan.settings.concurrency = 2;
  plan.settings.duration = Duration{300ms};
  plan.settings.window = Duration{100ms};
  {
    chaosbench::bench::MetricsClient metrics("unix:" + path, 0);
    REQUIRE(metrics.connected());
    std::atomic<bool> stop{false};
    LlmLoadGenerator generator(plan, metrics, stop);
    const auto r = generator.run();
    CHECK(r.completed > 0);
  }  // the client closes: the reader sees the end
  reader.join();
  ::close(listen_fd);
  for (const char* name : {"infer/ttft", "infer/tpot", "infer/e2e_latency", "infer/itl", "infer/throughput",
                           "infer/output_tokens_per_s", "infer/request_goodput", "infer/slo_attainment",
                           "infer/error_rate"})
    CHECK_THAT(received, Catch::Contains(std::string("\"") + name + "\""));
}

}  // namespace llm_load_robust_test

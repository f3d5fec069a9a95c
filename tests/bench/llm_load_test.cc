// The LLM load generator (bench/llm/load/llm_load_generator.h) against the built-in synthetic
// server in-process on loopback: measured TTFT and TPOT against the configured ground
// truth at 1 and 200 streams, whole answers, the chat API, round-robin and failover,
// Poisson arrivals' rate, and find_peak with a server whose capacity is bounded.
// At 200 streams the server's admission of the burst is part of TTFT (from the scheduled
// time); the test checks the client's accuracy after it (see check_ground_truth), and
// perf/workloads/llm_load.sh is the authority for the end-to-end figures. A measurement whose only
// misses are timing brackets is taken again, up to three times (timing_attempts.h).
#include <arpa/inet.h>
#include <cmath>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "bench/llm/load/llm_peak_search.h"
#include "common/values/percentile.h"
#include "llm_load_fixture.h"
#include "timing_attempts.h"

namespace llm_load_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::bench::llm;
using namespace std::chrono_literals;
using chaosbench::common::Duration;
using chaosbench::test::fixed_length;
using chaosbench::test::plan_for;
using chaosbench::test::run_plan;
using chaosbench::test::synthetic_server;
using chaosbench::test::bracket;
using chaosbench::test::TimingMisses;
using chaosbench::test::within_timing_attempts;

namespace {

const SyntheticTiming kGroundTruth{150ms, 20ms, 64};

// `rounds` rounds of `streams` requests, each round taking about 1.41 s at the ground truth.
LlmLoadPlan closed_loop(unsigned short port, int streams, int rounds = 1) {
  auto plan = plan_for({port});
  plan.settings.arrival = Arrival::kConcurrency;
  plan.settings.concurrency = streams;
  plan.settings.duration = Duration{std::chrono::milliseconds(1410 * (rounds - 1) + 90)};
  plan.settings.output = fixed_length(64);
  return plan;
}

// Open loop at a constant `rate` for `length`, answers of `tokens` tokens.
LlmLoadPlan constant_rate(const std::vector<unsigned short>& ports, double rate, std::chrono::milliseconds length,
                          int tokens) {
  auto plan = plan_for(ports);
  plan.settings.arrival = Arrival::kConstant;
  plan.settings.rate = rate;
  plan.settings.duration = Duration{length};
  plan.settings.output = fixed_length(tokens);
  return plan;
}

// A port on loopback where nothing listens (bound, then closed).
unsigned short closed_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// One run of `plan` whose counts must hold: `min` answers or more, none failed, `tokens` each.
LlmLoadResult run_counted(const LlmLoadPlan& plan, int min, int tokens) {
  auto r = run_plan(plan);
  INFO(format_llm_load_summary(r));
  REQUIRE(r.completed >= min);
  CHECK(r.failed == 0);
  CHECK(r.output_tokens == tokens * r.completed);
  return r;
}

// TTFT counts from the scheduled time, so at 200 streams it includes the client's sending
// of the burst and the server's admission of it. The server times its first token from
// its own arrival stamp, which lies between the request's send (send_lag) and the head of
// its answer (first_byte, written just after): so each TTFT must lie within
// [send + 150 ms, first byte + 150 ms], give or take the client's reading. That bracket is
// the client's accuracy; at 1 stream it is narrow and TTFT itself must match.
// The counts must hold on every attempt; the timing brackets come back as misses.
TimingMisses check_ground_truth(const LlmLoadResult& r, int streams) {
  INFO(format_llm_load_summary(r));
  REQUIRE(r.completed >= streams);
  CHECK(r.failed == 0);
  CHECK(r.output_tokens == 64 * r.completed);
  REQUIRE(r.first_byte_ms.size() == r.ttft_ms.size());
  REQUIRE(r.send_lag_ms.size() == r.ttft_ms.size());
  std::vector<double> after_send, after_head;
  for (std::size_t i = 0; i < r.ttft_ms.size(); ++i) {
    after_send.push_back(r.ttft_ms[i] - r.send_lag_ms[i]);
    after_head.push_back(r.ttft_ms[i] - r.first_byte_ms[i]);
  }
  TimingMisses m;
  const double sent = chaosbench::common::percentile(after_send, 50), head = chaosbench::common::percentile(after_head, 50);
  bracket(m, sent >= 149.5, "TTFT after the send, p50 ms", sent, ">= 149.5");
  // 200 first tokens fall due at once: the server's burst of writes and the client's reads
  // of it take a few ms on two shared cores, so 3 ms there (perf/workloads/llm_load.sh measures it).
  const double head_max = streams == 1 ? 152 : 153;
  bracket(m, head <= head_max, "TTFT after the answer's head, p50 ms", head, fmt::format("<= {}", head_max));
  const double ttft = chaosbench::common::percentile(r.ttft_ms, 50), tpot = chaosbench::common::percentile(r.tpot_ms, 50), itl = chaosbench::common::percentile(r.itl_ms, 50);
  if (streams == 1) bracket(m, std::abs(ttft - 150) <= 2, "TTFT p50 ms", ttft, "150 +/- 2");
  bracket(m, std::abs(tpot - 20) <= 0.5, "TPOT p50 ms", tpot, "20 +/- 0.5");
  bracket(m, std::abs(itl - 20) <= 1, "ITL p50 ms", itl, "20 +/- 1");
  return m;
}

}  // namespace

TEST_CASE("llm-load: measured TTFT and TPOT match the synthetic server at 1 stream", "[llm-load][slow]") {
  LlmServerConfig cfg;
  cfg.context_tokens = 1024;
  auto server = synthetic_server(kGroundTruth, cfg);
  // Three requests in turn: one timer woken late on a loaded machine is not the median.
  within_timing_attempts(3, [&](int) { return check_ground_truth(run_plan(closed_loop(server->port(), 1, 3)), 1); });
}

TEST_CASE("llm-load: measured TTFT and TPOT match the synthetic server at 200 streams", "[llm-load]") {
  LlmServerConfig cfg;
  cfg.context_tokens = 1024;
  auto server = synthetic_server(kGroundTruth, cfg);
  within_timing_attempts(3, [&](int) { return check_ground_truth(run_plan(closed_loop(server->port(), 200)), 200); });
}

TEST_CASE("llm-load: whole answers and the chat API", "[llm-load]") {
  LlmServerConfig cfg;
  cfg.context_tokens = 1024;
  auto server = synthetic_server({30ms, 2ms, 16}, cfg);
  auto plan = closed_loop(server->port(), 2);
  plan.settings.duration = Duration{std::chrono::milliseconds(400)};  // about 14 answers: a median, not one
  plan.settings.output = fixed_length(16);
  SECTION("not streamed: TTFT is e2e, tokens from usage") {
    plan.settings.stream = false;
    within_timing_attempts(3, [&](int) {
      const auto r = run_counted(plan, 2, 16);
      CHECK(r.ttft_ms == r.e2e_ms);
      CHECK(r.tpot_ms.empty());
      TimingMisses m;
      const double e2e = chaosbench::common::percentile(r.e2e_ms, 50);
      bracket(m, std::abs(e2e - (30 + 15 * 2)) <= 5, "e2e p50 ms", e2e, "60 +/- 5");
      return m;
    });
  }
  SECTION("chat, streamed") {
    plan.settings.api = OpenAiEndpoint::kChatCompletions;
    within_timing_attempts(3, [&](int) {
      const auto r = run_counted(plan, 2, 16);
      TimingMisses m;
      const double ttft = chaosbench::common::percentile(r.ttft_ms, 50);
      bracket(m, std::abs(ttft - 30) <= 5, "TTFT p50 ms", ttft, "30 +/- 5");
      return m;
    });
  }
}

TEST_CASE("llm-load: round-robin over two servers and failover from a dead one", "[llm-load]") {
  auto a = synthetic_server({5ms, 1ms, 4});
  auto b = synthetic_server({5ms, 1ms, 4});
  SECTION("both live: each gets about half") {
    const auto r = run_plan(constant_rate({a->port(), b->port()}, 200, 500ms, 4));
    INFO(format_llm_load_summary(r));
    CHECK(r.completed == 100);
    CHECK(r.failovers == 0);
    CHECK(a->metrics().generation_tokens() == 200);
    CHECK(b->metrics().generation_tokens() == 200);
  }
  SECTION("one down: every request fails over to the other") {
    const auto r = run_plan(constant_rate({closed_port(), b->port()}, 100, 300ms, 4));
    INFO(format_llm_load_summary(r));
    CHECK(r.completed == 30);
    CHECK(r.failed == 0);
    CHECK(r.failovers >= 1);
  }
  SECTION("all down: connect failures, counted") {
    const auto r = run_plan(constant_rate({closed_port()}, 50, 100ms, 4));
    CHECK(r.completed == 0);
    CHECK(r.failures.at("connect") == r.issued);
  }
}

TEST_CASE("llm-load: Poisson arrivals keep their mean rate", "[llm-load]") {
  auto server = synthetic_server({1ms, 1ms, 2});
  auto plan = plan_for({server->port()});
  plan.settings.arrival = Arrival::kPoisson;
  plan.settings.rate = 400;
  plan.settings.duration = Duration{1s};
  plan.settings.output = fixed_length(2);
  plan.seed = 7;
  const auto r = run_plan(plan);
  INFO(format_llm_load_summary(r));
  // 400 expected; a Poisson count's standard deviation is 20: 4 sigma either way.
  CHECK(r.issued > 320);
  CHECK(r.issued < 480);
  CHECK(r.completed == r.issued);
}

TEST_CASE("llm-load: open loop past max_in_flight fails requests as rejected", "[llm-load]") {
  auto server = synthetic_server({200ms, 1ms, 2});
  auto plan = constant_rate({server->port()}, 100, 300ms, 2);
  plan.settings.max_in_flight = 5;
  const auto r = run_plan(plan);
  INFO(format_llm_load_summary(r));
  // 5 admitted at once; each slot frees after about 200 ms, so about 10 complete in all.
  CHECK(r.completed >= 5);
  CHECK(r.completed <= 12);
  CHECK(r.failures.at("rejected") == r.issued - r.completed);
}

TEST_CASE("llm-load: find_peak brackets a server of bounded capacity", "[llm-load][slow]") {
  LlmServerConfig cfg;
  cfg.max_running = 4;  // 429 past 4 at once: about 4 / 45 ms = 90 req/s at most
  auto server = synthetic_server({20ms, 5ms, 6}, cfg);
  auto plan = plan_for({server->port()});
  plan.settings.output = fixed_length(6);
  plan.settings.slo.ttft = Duration{200ms};
  plan.settings.find_peak = PeakSearchSettings{10, 90, 0.3, Duration{400ms}, 10};
  chaosbench::bench::MetricsClient metrics;
  std::atomic<bool> stop{false};
  const auto peak = run_llm_peak_search(plan, metrics, stop);
  INFO(describe_peak(peak));
  REQUIRE(peak.highest_passing);
  REQUIRE(peak.lowest_failing);
  CHECK(*peak.highest_passing >= 10);
  CHECK(*peak.lowest_failing <= 400);
  CHECK(*peak.highest_passing < *peak.lowest_failing);
}

}  // namespace llm_load_test

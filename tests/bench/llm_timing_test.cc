// bench/llm/: one streamed request's timing (TTFT from the scheduled time, ITL, TPOT,
// e2e, usage versus counted tokens, failures), SLO judgement and goodput, find_peak.
// Exact numbers on hand-made timelines. The datasets are llm_dataset_test.cc.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>

#include "bench/llm/load/find_peak.h"
#include "bench/llm/load/goodput_tally.h"
#include "bench/llm/load/slo.h"
#include "bench/llm/stream/stream_timeline.h"

namespace llm_timing_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

namespace llm = chaosbench::bench::llm;
using namespace std::chrono_literals;
using Clock = llm::StreamTimeline::Clock;

namespace {

const Clock::time_point t0{std::chrono::seconds(1000)};

// 150 ms to the first token, then one token every 20 ms: the synthetic server.
llm::StreamTimeline cadence(int tokens) {
  llm::StreamTimeline tl(t0, 32);
  tl.sent(t0 + 2ms);
  tl.chunk(t0 + 100ms, 0);  // the chat API's role-only delta: a byte, not a token
  for (int i = 0; i < tokens; ++i) tl.chunk(t0 + 150ms + i * 20ms, 1);
  tl.finish(t0 + 150ms + tokens * 20ms);
  return tl;
}

llm::Slo slo(std::optional<std::chrono::nanoseconds> ttft, std::optional<std::chrono::nanoseconds> tpot,
             std::optional<std::chrono::nanoseconds> e2e) {
  llm::Slo s;
  if (ttft) s.ttft = chaosbench::common::Duration{*ttft};
  if (tpot) s.tpot = chaosbench::common::Duration{*tpot};
  if (e2e) s.e2e = chaosbench::common::Duration{*e2e};
  return s;
}

}  // namespace

TEST_CASE("a steady stream gives exact TTFT, ITL, TPOT and e2e", "[llm-timing]") {
  const llm::StreamTiming t = cadence(64).timing();
  REQUIRE(t.ok());
  CHECK(*t.send_lag == 2ms);
  CHECK(*t.first_byte == 100ms);
  CHECK(*t.ttft == 150ms);
  CHECK(t.e2e == 150ms + 63 * 20ms);  // the last token, not the finish
  CHECK(*t.tpot == 20ms);
  REQUIRE(t.itl.size() == 63);
  for (auto gap : t.itl) CHECK(gap == 20ms);
  CHECK(t.output_tokens == 64);
  CHECK(t.counted_tokens == 64);
  CHECK_FALSE(t.tokens_from_usage);
  CHECK(t.input_tokens == 32);
  CHECK(t.output_tokens_per_s() == Approx(64 / 1.41));
}

TEST_CASE("latency runs from the scheduled time, not the late send", "[llm-timing]") {
  llm::StreamTimeline tl(t0, 8);
  tl.sent(t0 + 500ms);  // the client stalled half a second
  tl.chunk(t0 + 600ms, 1);
  tl.finish(t0 + 600ms);
  const auto t = tl.timing();
  CHECK(*t.send_lag == 500ms);
  CHECK(*t.ttft == 600ms);
  CHECK(t.e2e == 600ms);
}

TEST_CASE("chunks of several tokens: one ITL gap per chunk, TPOT per token", "[llm-timing]") {
  llm::StreamTimeline tl(t0, 10);
  tl.chunk(t0 + 100ms, 1);
  tl.chunk(t0 + 130ms, 4);
  tl.chunk(t0 + 190ms, 5);
  tl.finish(t0 + 200ms);
  const auto t = tl.timing();
  CHECK(t.output_tokens == 10);
  REQUIRE(t.itl.size() == 2);
  CHECK(t.itl[0] == 30ms);
  CHECK(t.itl[1] == 60ms);
  CHECK(t.e2e == 190ms);
  CHECK(*t.tpot == 10ms);  // (190 - 100) / 9
}

TEST_CASE("the server's usage wins over counted chunks", "[llm-timing]") {
  llm::StreamTimeline tl(t0, 10);
  tl.chunk(t0 + 100ms, 1);
  tl.chunk(t0 + 200ms, 1);
  tl.usage(std::nullopt, std::nullopt);  // nothing: keeps the counts
  tl.usage(-5, 11);                      // a negative prompt count is ignored
  tl.chunk(t0 + 210ms, 0);               // the usage-only chunk: no token, no new e2e
  tl.finish(t0 + 220ms);
  const auto t = tl.timing();
  CHECK(t.tokens_from_usage);
  CHECK(t.output_tokens == 11);
  CHECK(t.counted_tokens == 2);
  CHECK(t.input_tokens == 10);
  CHECK(t.e2e == 200ms);
  CHECK(*t.tpot == 10ms);  // (200 - 100) / (11 - 1)
  tl.usage(40, std::nullopt);
  CHECK(tl.timing().input_tokens == 40);
}

TEST_CASE("zero and one token: no TPOT, TTFT only with a token", "[llm-timing]") {
  SECTION("one token") {
    const auto t = cadence(1).timing();
    CHECK(*t.ttft == 150ms);
    CHECK(t.e2e == 150ms);
    CHECK_FALSE(t.tpot);
    CHECK(t.itl.empty());
  }
  SECTION("no token: e2e runs to the finish") {
    const auto t = cadence(0).timing();
    REQUIRE(t.ok());
    CHECK_FALSE(t.ttft);
    CHECK_FALSE(t.tpot);
    CHECK(t.e2e == 150ms);
    CHECK(t.output_tokens == 0);
  }
}

TEST_CASE("failures: before the first token, mid-stream, first reason stands", "[llm-timing]") {
  SECTION("refused before any byte") {
    llm::StreamTimeline tl(t0, 4);
    tl.fail(t0 + 3ms, llm::StreamFailure::kConnect, "connection refused");
    tl.fail(t0 + 9ms, llm::StreamFailure::kTimeout);  // ignored
    tl.finish(t0 + 10ms);                             // ignored
    const auto t = tl.timing();
    CHECK(t.failure == llm::StreamFailure::kConnect);
    CHECK(t.failure_detail == "connection refused");
    CHECK_FALSE(t.first_byte);
    CHECK_FALSE(t.ttft);
    CHECK(t.e2e == 3ms);
  }
  SECTION("cut mid-stream: e2e to the failure, TPOT from the tokens seen") {
    llm::StreamTimeline tl(t0, 4);
    tl.chunk(t0 + 100ms, 1);
    tl.chunk(t0 + 120ms, 1);
    tl.chunk(t0 + 140ms, 1);
    tl.fail(t0 + 500ms, llm::StreamFailure::kTruncated);
    tl.chunk(t0 + 600ms, 1);  // after the end: ignored
    const auto t = tl.timing();
    CHECK(t.failure == llm::StreamFailure::kTruncated);
    CHECK(t.e2e == 500ms);
    CHECK(*t.ttft == 100ms);
    CHECK(*t.tpot == 20ms);
    CHECK(t.output_tokens == 3);
  }
  SECTION("kNone is not a failure") {
    llm::StreamTimeline tl(t0, 4);
    tl.fail(t0 + 1ms, llm::StreamFailure::kNone);
    CHECK_FALSE(tl.ended());
  }
  CHECK(llm::to_string(llm::StreamFailure::kHttpStatus) == "http_status");
}

TEST_CASE("SLO judgement: inclusive bounds, each optional", "[llm-timing]") {
  const auto t = cadence(64).timing();  // TTFT 150 ms, TPOT 20 ms, e2e 1410 ms
  CHECK(llm::check_slo({}, t).attained());
  CHECK(llm::check_slo(slo(150ms, 20ms, 1410ms), t).attained());
  const auto c = llm::check_slo(slo(149ms, 19ms, 1409ms), t);
  CHECK_FALSE(c.attained());
  CHECK_FALSE(c.ttft);
  CHECK_FALSE(c.tpot);
  CHECK_FALSE(c.e2e);
  CHECK(llm::check_slo(slo(std::nullopt, 20ms, std::nullopt), t).attained());
  // One token: TPOT counts as 0 (vLLM); no token: a TTFT bound is missed.
  CHECK(llm::check_slo(slo(std::nullopt, 1ns, std::nullopt), cadence(1).timing()).attained());
  CHECK_FALSE(llm::check_slo(slo(1s, std::nullopt, std::nullopt), cadence(0).timing()).attained());
  CHECK(llm::check_slo(slo(std::nullopt, std::nullopt, 1s), cadence(0).timing()).attained());
  // A failure never attains, even an empty SLO.
  llm::StreamTimeline failed(t0, 4);
  failed.fail(t0 + 1ms, llm::StreamFailure::kHttpStatus, "HTTP 503");
  CHECK_FALSE(llm::check_slo({}, failed.timing()).attained());
}

TEST_CASE("goodput and SLO attainment over a window", "[llm-timing]") {
  llm::GoodputTally tally(slo(200ms, 25ms, std::nullopt));
  CHECK_FALSE(tally.slo_attainment());
  CHECK(tally.request_goodput(10) == 0);
  for (int i = 0; i < 6; ++i) tally.add(cadence(16).timing());  // attain
  llm::StreamTimeline slow(t0, 4);                               // TTFT 300 ms, TPOT 30 ms
  slow.chunk(t0 + 300ms, 1);
  slow.chunk(t0 + 330ms, 1);
  slow.finish(t0 + 340ms);
  tally.add(slow.timing());
  llm::StreamTimeline failed(t0, 4);
  failed.fail(t0 + 5s, llm::StreamFailure::kTimeout);
  tally.add(failed.timing());
  CHECK(tally.finished() == 8);
  CHECK(tally.completed() == 7);
  CHECK(tally.failed() == 1);
  CHECK(tally.attained() == 6);
  CHECK(tally.missed_ttft() == 1);
  CHECK(tally.missed_tpot() == 1);
  CHECK(tally.missed_e2e() == 0);
  CHECK(*tally.slo_attainment() == Approx(75.0));
  CHECK(tally.request_goodput(2.0) == Approx(3.0));
  CHECK(tally.request_goodput(0) == 0);
  tally.clear();
  CHECK(tally.finished() == 0);
}

namespace {

// A server model: attainment 100 % up to `capacity` req/s, then falling linearly.
auto capacity_model(double capacity, int* calls = nullptr) {
  return [capacity, calls](double rate) -> std::optional<double> {
    if (calls) ++*calls;
    return rate <= capacity ? 100.0 : std::max(0.0, 100.0 - 50.0 * (rate - capacity) / capacity);
  };
}

}  // namespace

TEST_CASE("find_peak brackets the capacity by doubling, then bisection", "[llm-timing]") {
  llm::FindPeakOptions o;
  o.start_rate = 1;
  o.target_attainment = 99;
  o.relative_precision = 0.01;
  const auto r = llm::find_peak(capacity_model(37), o);
  CHECK(r.stop == llm::PeakStop::kConverged);
  REQUIRE(r.highest_passing);
  REQUIRE(r.lowest_failing);
  // The model attains >= 99 % up to 37 × 1.02 = 37.74 req/s.
  CHECK(*r.highest_passing <= 37.74);
  CHECK(*r.lowest_failing > 37.74);
  CHECK((*r.lowest_failing - *r.highest_passing) <= 0.01 * *r.highest_passing);
  // Doubling 1, 2, ..., 64 (the first fail), then bisection of [32, 64].
  REQUIRE(r.trials.size() >= 7);
  CHECK(r.trials[0].rate == 1);
  CHECK(r.trials[6].rate == 64);
  CHECK_FALSE(r.trials[6].passed);
  CHECK(r.trials[7].rate == 48);
}

TEST_CASE("find_peak from above halves, with edges and limits", "[llm-timing]") {
  llm::FindPeakOptions o;
  o.start_rate = 1000;
  o.relative_precision = 0.05;
  auto r = llm::find_peak(capacity_model(10), o);
  CHECK(r.stop == llm::PeakStop::kConverged);
  CHECK(*r.highest_passing <= 10.2);
  CHECK(*r.highest_passing >= 10.2 / 1.05);

  o.max_rate = 100;
  o.start_rate = 1;
  r = llm::find_peak(capacity_model(1e9), o);
  CHECK(r.stop == llm::PeakStop::kNothingFails);
  CHECK(*r.highest_passing == 100);
  CHECK_FALSE(r.lowest_failing);

  r = llm::find_peak([](double) { return std::optional<double>{}; }, o);  // no request ever finished
  CHECK(r.stop == llm::PeakStop::kNothingPasses);
  CHECK_FALSE(r.highest_passing);
  CHECK(*r.lowest_failing == Approx(o.min_rate));

  int calls = 0;
  o.max_trials = 5;
  o.max_rate = 1e6;
  r = llm::find_peak(capacity_model(1000, &calls), o);
  CHECK(r.stop == llm::PeakStop::kMaxTrials);
  CHECK(calls == 5);
  CHECK(r.trials.size() == 5);

  o.relative_precision = 0;
  CHECK_THROWS_AS(llm::find_peak(capacity_model(1), o), std::invalid_argument);
  CHECK(llm::to_string(llm::PeakStop::kNothingPasses) == "nothing_passes");
}

}  // namespace llm_timing_test

// Each tuning-advice rule fires on a run crafted to trip it, citing the numbers, and stays
// silent on a healthy run.
#include <catch2/catch.hpp>

#include "report_fixtures.h"
#include "reports/advice/tuning_advice.h"

namespace tuning_advice_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::reports;
using chaosbench::test::clean_train_run;
using chaosbench::test::golden_run;
using chaosbench::test::metric;

namespace {

std::vector<std::string> fired(const RunResult& run) {
  std::vector<std::string> ids;
  for (const auto& a : tuning_advice(run)) ids.push_back(a.rule);
  return ids;
}

// The one piece of advice `rule` gave, which must be the only one.
Advice only(const RunResult& run, const std::string& rule) {
  auto advice = tuning_advice(run);
  REQUIRE(fired(run) == std::vector<std::string>{rule});
  return advice.front();
}

MetricRecord& find(RunResult& run, const std::string& name, const std::string& bucket = "") {
  for (auto& m : run.metrics)
    if (m.name == name && (bucket.empty() || label_to_string(m.labels.at("bucket")) == bucket)) return m;
  FAIL("no " << name);
  throw;
}

}  // namespace

TEST_CASE("advice: a healthy run gets none", "[advice]") {
  CHECK(fired(clean_train_run()).empty());
  CHECK(fired(RunResult{}).empty());
}

TEST_CASE("advice: exposed communication cites the medians and the bucket size", "[advice]") {
  auto run = clean_train_run();
  find(run, "train/comm_time") = metric("train/comm_time", "ms", "baseline", 40, {}, true);
  auto a = only(run, "exposed-communication");
  CHECK(a.severity == "medium");
  CHECK(a.evidence == "exposed communication is 40.0 % of step time in baseline (train/comm_time p50 40.0 ms of "
                      "train/step_time p50 100 ms); train/overlap 80.0 %");
  CHECK_THAT(a.recommendation, Catch::Contains("bucket_size is 4 MiB: try 16 MiB"));
}

TEST_CASE("advice: small messages dominated by latency", "[advice]") {
  SECTION("collective benchmark: busbw of the smallest size against the peak") {
    RunResult run;
    Labels ring = {{"collective", std::string("allreduce")}, {"algorithm", std::string("ring")}, {"ranks", std::int64_t{4}}};
    auto at = [&](std::int64_t bytes) {
      Labels l = ring;
      l["bytes"] = bytes;
      return l;
    };
    run.metrics = {metric("comm/busbw", "GB/s", "baseline", 0.005, at(4096)),
                   metric("comm/busbw", "GB/s", "baseline", 0.2, at(1 << 20)),
                   metric("comm/busbw", "GB/s", "baseline", 0.25, at(16 << 20)),
                   metric("comm/latency", "us", "baseline", 812, at(4096))};
    auto a = only(run, "small-message-latency");
    CHECK(a.evidence == "allreduce (ring) in baseline: 4 KiB messages take 812 us and reach busbw 0.005 GB/s, 2 % of "
                        "the 0.25 GB/s peak (largest size 16 MiB: 0.25 GB/s)");
    CHECK_THAT(a.recommendation, Catch::Contains("half the peak bus bandwidth from 1 MiB"));
  }
  SECTION("train: many buckets per step while communication is exposed") {
    auto run = clean_train_run();
    set_scenario(run, R"({"cluster":{"nodes":4},"workload":{"kind":"train","bucket_size":"1MiB",)"
                        R"("model":{"layers":[1024,1024,1024,1024,1024,1024,1024,1024,1024,1024]}}})");
    find(run, "train/comm_time") = metric("train/comm_time", "ms", "baseline", 20, {}, true);
    auto a = only(run, "small-message-latency");
    CHECK_THAT(a.evidence, Catch::StartsWith("36 MiB of fp32 gradients go out in about 9 allreduces of 1 MiB per step"));
    CHECK_THAT(a.evidence, Catch::Contains("effective allreduce busbw about"));
    CHECK_THAT(a.recommendation, Catch::Contains("Try bucket_size 4 MiB (3 buckets or fewer)"));
  }
}

TEST_CASE("advice: rank imbalance names the straggler", "[advice]") {
  auto run = clean_train_run();
  find(run, "train/rank_imbalance").value = 25;
  for (auto& m : run.metrics)
    if (m.name == "train/straggler_score" && label_to_string(m.labels.at("rank")) == "1") m.value = 0.8;
  ProcessRecord p;
  p.rank = 1;
  p.node = "node1";
  run.processes = {p};
  auto a = only(run, "rank-imbalance");
  CHECK(a.severity == "high");
  CHECK(a.evidence == "train/rank_imbalance 25.0 % in baseline; the straggler is rank 1 on node1: train/straggler_score "
                      "0.8 ratio (fastest rank's compute time ÷ its own)");
  CHECK_THAT(a.recommendation, Catch::Contains("Rank 1 is slow without an injected fault"));
}

TEST_CASE("advice: checkpoint blocking, from badput or from the save times", "[advice]") {
  auto run = clean_train_run();
  SECTION("badput bucket") {
    find(run, "resilience/badput", "checkpoint_save").value = 8;
    auto a = only(run, "checkpoint-blocking");
    CHECK_THAT(a.evidence, Catch::StartsWith("checkpoint saves blocked training for 8 % of wall time (resilience/badput checkpoint_save)"));
    CHECK_THAT(a.recommendation, Catch::Contains("Saving every 100 steps instead of 50 halves this cost (to about 4 %)"));
  }
  SECTION("sum of ckpt/save_time over the run") {
    run.metrics.erase(std::remove_if(run.metrics.begin(), run.metrics.end(),
                                     [](const MetricRecord& m) { return m.name == "resilience/badput"; }),
                      run.metrics.end());
    find(run, "ckpt/save_time") = metric("ckpt/save_time", "ms", "overall", 400, {}, true);  // 10 saves, 4000 ms
    auto a = only(run, "checkpoint-blocking");
    CHECK_THAT(a.evidence, Catch::Contains("6.67 % of wall time"));
    CHECK_THAT(a.evidence, Catch::Contains("10 saves, ckpt/save_time mean 400 ms, total 4000 ms of a 60.0 s run"));
  }
}

TEST_CASE("advice: long recovery computes the checkpoint interval trade-off", "[advice]") {
  auto run = clean_train_run();
  SECTION("time to recover") {
    find(run, "resilience/time_to_recover").value = 15;
    auto a = only(run, "long-recovery");
    CHECK_THAT(a.evidence, Catch::StartsWith("resilience/time_to_recover 15.0 s after fault slow-link"));
    // I = 50 steps, T = 100 ms, C = 12 ms: half an interval lost per failure; halving I
    // pays off above (I*T)^2 / (4C) = 25 / 0.048 = 521 s between failures.
    CHECK_THAT(a.recommendation, Catch::Contains("A failure loses on average 25 steps × 100 ms = 2.5 s of work."));
    CHECK_THAT(a.recommendation, Catch::Contains("every 25 steps would lose 1.25 s per failure and cost 0.48 ms per step"));
    CHECK_THAT(a.recommendation, Catch::Contains("more often than once every 521 s"));
    CHECK_THAT(a.recommendation, !Catch::Contains("elastic:"));  // already elastic
  }
  SECTION("recovery and wasted progress in the badput") {
    find(run, "resilience/badput", "recovery").value = 8;
    find(run, "resilience/badput", "wasted_progress").value = 3;
    set_scenario(run, R"({"workload":{"kind":"train","recovery":{"mode":"restart"}}})");
    auto a = only(run, "long-recovery");
    CHECK_THAT(a.evidence, Catch::Contains("recovery + wasted_progress 11.0 % of wall time"));
    CHECK_THAT(a.recommendation, Catch::Contains("Set recovery.mode to elastic"));
    CHECK_THAT(a.recommendation, Catch::Contains("There are no checkpoints"));
  }
}

TEST_CASE("advice: throughput retention under a fault names the worst fault", "[advice]") {
  auto run = clean_train_run();
  find(run, "resilience/throughput_retention").value = 0.3;
  auto a = only(run, "fault-throughput");
  CHECK(a.evidence == "slow-link (network.delay on node3) kept 30.0 % of baseline throughput "
                      "(resilience/throughput_retention 0.3 ratio)");
  CHECK_THAT(a.recommendation, Catch::Contains("The worst is slow-link: a degraded link"));
}

TEST_CASE("advice: batch size and learning rate wait for sweep results", "[advice]") {
  auto run = clean_train_run();
  set_scenario(run, R"({"sweep":{"batch_size":[256,1024]},"workload":{"kind":"train"}})");
  CHECK(fired(run).empty());
}

TEST_CASE("advice: order is severity, then rule id", "[advice]") {
  CHECK(fired(golden_run()) ==
        std::vector<std::string>{"fault-throughput", "long-recovery", "checkpoint-blocking", "exposed-communication"});
}

TEST_CASE("advice: Xid errors say what the Xid usually means", "[advice]") {
  auto run = clean_train_run();
  run.metrics.push_back(metric("gpu/xid_events", "count", "overall", 1, {{"xid", std::int64_t{48}}}));
  auto a = only(run, "gpu-errors");
  CHECK(a.severity == "high");
  CHECK(a.evidence == "Xid 48 reported 1 time(s) (gpu/xid_events)");
  CHECK_THAT(a.recommendation, Catch::Contains("HBM ECC error"));
}

TEST_CASE("advice: bit flips say how many were caught and what catches the rest", "[advice]") {
  auto run = clean_train_run();
  run.metrics.push_back(metric("resilience/sdc_caught", "ratio", "overall", 0.5));
  run.metrics.push_back(metric("resilience/sdc_detection_steps", "steps", "overall", 1));
  auto a = only(run, "silent-corruption");
  CHECK(a.evidence == "50.0 % of the injected bit flips caught (resilience/sdc_caught 0.5 ratio), each within 1 "
                      "step(s) (resilience/sdc_detection_steps)");
  CHECK_THAT(a.recommendation, Catch::Contains("gradient norms"));
}

}  // namespace tuning_advice_test

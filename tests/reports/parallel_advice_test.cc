// The hybrid-parallel tuning-advice rules (reports/advice/parallel_advice.h) on a hand-built run
// of tp 2, pp 2, dp 2: each fires on the record crafted to trip it, citing the numbers,
// and stays silent just below its threshold and on a healthy run.
#include <catch2/catch.hpp>

#include <algorithm>

#include "report_fixtures.h"
#include "reports/model/text_format.h"
#include "reports/advice/tuning_advice.h"

namespace parallel_advice_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::reports;
using chaosbench::test::metric;

namespace {

Labels stage(std::int64_t s) { return {{"pp_stage", s}}; }
Labels group(std::int64_t s, std::int64_t g) { return {{"pp_stage", s}, {"tp_group", g}}; }
Labels comm(const char* g) { return {{"group", std::string(g)}}; }

// Ranks in Megatron's order (rank = tp_rank + 2 × (dp_rank + 2 × pp_stage)), two a node:
// each TP group on a node of its own; `spread` puts rank r on node r % 4 instead.
RunResult hybrid_run(const std::string& parallel = R"({"tp":2,"pp":2,"dp":2,"microbatches":4})", bool spread = false) {
  RunResult run;
  set_scenario(run, R"({"name":"hybrid","cluster":{"nodes":4},"workload":{"kind":"train","batch_size":1024,"parallel":)" +
                        parallel + "}}");
  run.duration_s = 60;
  run.phases = {{"baseline", 0, 60}};
  for (int r = 0; r < 8; ++r) {
    ProcessRecord p;
    p.rank = r;
    p.node = "node" + std::to_string(spread ? r % 4 : r / 2);
    run.processes.push_back(p);
    run.series.push_back({"train/step_time", "ms",
                          {{"rank", std::int64_t{r}}, {"tp_rank", std::int64_t{r % 2}}, {"dp_rank", std::int64_t{r / 2 % 2}},
                           {"pp_stage", std::int64_t{r / 4}}},
                          {1.0}, {100.0}});
  }
  run.metrics = {
      metric("train/step_time", "ms", "baseline", 100, {}, true),
      metric("train/comm_time", "ms", "baseline", 10, {}, true),
      metric("comm/time", "ms", "baseline", 10, comm("tp"), true),
      metric("comm/time", "ms", "baseline", 5, comm("pp"), true),
      metric("comm/time", "ms", "baseline", 3, comm("dp"), true),
      metric("comm/bytes", "bytes", "baseline", 4 << 20, comm("tp"), true),
      metric("train/pipeline_bubble", "%", "baseline", 18, stage(0), true),
      metric("train/pipeline_bubble", "%", "baseline", 16, stage(1), true),
  };
  for (std::int64_t s : {0, 1}) {
    run.metrics.push_back(metric("train/stage_time", "ms", "baseline", 100, stage(s)));
    run.metrics.push_back(metric("train/straggler_score", "ratio", "baseline", 1.0, stage(s)));
    for (std::int64_t g : {2 * s, 2 * s + 1}) {
      run.metrics.push_back(metric("train/stage_time", "ms", "baseline", 100, group(s, g)));
      run.metrics.push_back(metric("train/straggler_score", "ratio", "baseline", 1.0, group(s, g)));
    }
  }
  return run;
}

MetricRecord& at(RunResult& run, const std::string& name, const Labels& labels, const std::string& phase = "baseline") {
  for (auto& m : run.metrics)
    if (m.name == name && without_phase(m.labels) == labels && label_value(m.labels, "phase") == phase) return m;
  FAIL("no " << name << " " << format_labels(labels));
  throw;
}

std::vector<std::string> fired(const RunResult& run) {
  std::vector<std::string> ids;
  for (const auto& a : tuning_advice(run)) ids.push_back(a.rule);
  return ids;
}

Advice advice(const RunResult& run, const std::string& rule) {
  for (const auto& a : tuning_advice(run))
    if (a.rule == rule) return a;
  FAIL("no advice " << rule);
  throw;
}

}  // namespace

TEST_CASE("parallel advice: a healthy hybrid run gets none", "[parallel-advice]") {
  CHECK(fired(hybrid_run()).empty());
}

TEST_CASE("parallel advice: a slow pipeline stage", "[parallel-advice]") {
  auto run = hybrid_run();
  at(run, "train/straggler_score", stage(1)).value = 0.85;
  CHECK(fired(run).empty());
  at(run, "train/straggler_score", stage(1)).value = 0.6;
  at(run, "train/stage_time", stage(1)).value = 166;
  at(run, "train/stage_time", group(1, 2)).value = 160;
  at(run, "train/stage_time", group(1, 3)).value = 166;

  REQUIRE(fired(run) == std::vector<std::string>{"slow-pipeline-stage"});
  auto a = advice(run, "slow-pipeline-stage");
  CHECK(a.severity == "high");
  CHECK(a.evidence == "stage 1 in baseline: train/straggler_score 0.6 ratio (the fastest stage's time ÷ its own); "
                      "train/stage_time 166 ms against 100 ms on stage 0, the fastest; its ranks run on node2, node3");
  CHECK_THAT(a.recommendation, Catch::Contains("Move layers off stage 1") && Catch::Contains("check node2, node3 first"));

  SECTION("only one TP group of the stage is slow: its node, not the split") {
    at(run, "train/stage_time", group(1, 2)).value = 105;
    CHECK_THAT(advice(run, "slow-pipeline-stage").recommendation,
               Catch::Contains("Only part of stage 1 is slow") && Catch::Contains("slow-tp-group"));
  }
  SECTION("in a fault window it names the fault") {
    run.phases.push_back({"fault:pause-stage1", 20, 30});
    FaultRecord f;
    f.name = "pause-stage1";
    f.type = "node.pause";
    f.targets = {"node2", "node3"};
    run.faults.push_back(f);
    at(run, "train/straggler_score", stage(1)).value = 1.0;
    run.metrics.push_back(metric("train/straggler_score", "ratio", "fault:pause-stage1", 0.4, stage(1)));
    a = advice(run, "slow-pipeline-stage");
    CHECK_THAT(a.evidence, Catch::StartsWith("stage 1 in fault:pause-stage1: train/straggler_score 0.4 ratio (the fastest stage's time ÷ its own; baseline 1 ratio)"));
    CHECK_THAT(a.recommendation, Catch::Contains("what fault pause-stage1 (node.pause on node2,node3) injected"));
  }
}

TEST_CASE("parallel advice: a slow TP group within its stage", "[parallel-advice]") {
  auto run = hybrid_run();
  at(run, "train/straggler_score", group(1, 3)).value = 0.81;
  CHECK(fired(run).empty());
  at(run, "train/straggler_score", group(1, 3)).value = 0.5;
  at(run, "train/stage_time", group(1, 3)).value = 200;

  REQUIRE(fired(run) == std::vector<std::string>{"slow-tp-group"});
  auto a = advice(run, "slow-tp-group");
  CHECK(a.evidence == "TP group 3 (stage 1) in baseline: train/straggler_score 0.5 ratio (the fastest TP group of its stage ÷ "
                      "its own); train/stage_time 200 ms against 100 ms of TP group 2; its ranks run on node3");
  CHECK_THAT(a.recommendation, Catch::Contains("Check node3 first"));
}

TEST_CASE("parallel advice: a large pipeline bubble", "[parallel-advice]") {
  auto run = hybrid_run();
  at(run, "train/pipeline_bubble", stage(0)).value = 21;
  at(run, "train/pipeline_bubble", stage(1)).value = 19;
  CHECK(fired(run).empty());  // mean 20 %: not above
  at(run, "train/pipeline_bubble", stage(0)).value = 35;
  at(run, "train/pipeline_bubble", stage(1)).value = 25;

  REQUIRE(fired(run) == std::vector<std::string>{"pipeline-bubble"});
  auto a = advice(run, "pipeline-bubble");
  CHECK(a.severity == "medium");
  CHECK(a.evidence == "train/pipeline_bubble 30.0 % in baseline, the mean over 2 stages (25.0 % to 35.0 %); pp 2, 4 "
                      "microbatches: analytic bubble (p − 1)/(m + p − 1) = 20.0 %");
  // (p − 1)/(m + p − 1) < 10 % from m = 10; the replica's 1024 / 2 samples split evenly from 16.
  CHECK_THAT(a.recommendation, Catch::Contains("With 16 microbatches per step the analytic bubble is 5.88 % (it falls under "
                                               "10 % from m = 10; 16 is the first that divides the replica's 512 samples)"));
  CHECK_THAT(a.recommendation, !Catch::Contains("unequal"));

  SECTION("well above the analytic: unequal stages") {
    at(run, "train/pipeline_bubble", stage(0)).value = 45;
    at(run, "train/pipeline_bubble", stage(1)).value = 35;
    CHECK_THAT(advice(run, "pipeline-bubble").recommendation, Catch::Contains("20.0 points above the analytic"));
  }
  SECTION("enough microbatches already: only the imbalance is left to fix") {
    run = hybrid_run(R"({"tp":2,"pp":2,"dp":2,"microbatches":16})");
    at(run, "train/pipeline_bubble", stage(0)).value = 35;
    at(run, "train/pipeline_bubble", stage(1)).value = 25;
    a = advice(run, "pipeline-bubble");
    CHECK_THAT(a.evidence, Catch::Contains("= 5.88 %"));
    CHECK_THAT(a.recommendation, !Catch::Contains("With ") && Catch::Contains("points above the analytic"));
  }
  SECTION("an outside job: no microbatch count to cite") {
    set_scenario(run, R"({"name":"megatron","workload":{"kind":"command"}})");
    a = advice(run, "pipeline-bubble");
    CHECK_THAT(a.evidence, !Catch::Contains("analytic"));
    CHECK_THAT(a.recommendation, Catch::Contains("With 10 microbatches per step the analytic bubble is 9.09 % (it falls under 10 % from m = 10);"));
  }
}

TEST_CASE("parallel advice: heavy tensor-parallel communication", "[parallel-advice]") {
  auto run = hybrid_run();
  at(run, "comm/time", comm("tp")).stats->p50 = 25;
  CHECK(fired(run).empty());  // 25 %: not above
  at(run, "comm/time", comm("tp")).stats->p50 = 32;

  REQUIRE(fired(run) == std::vector<std::string>{"tp-communication"});
  auto a = advice(run, "tp-communication");
  CHECK(a.evidence == "TP communication is 32.0 % of step time in baseline (comm/time{group=tp} p50 32.0 ms of "
                      "train/step_time p50 100 ms); pp p50 5 ms; dp p50 3 ms; 4 MiB per rank and step in TP "
                      "allreduces (comm/bytes)");
  CHECK_THAT(a.recommendation, Catch::Contains("tp is 2: try tp 1") && Catch::Contains("Every TP group is on one node already."));

  SECTION("TP groups across nodes") {
    run = hybrid_run(R"({"tp":2,"pp":2,"dp":2,"microbatches":4})", true);
    at(run, "comm/time", comm("tp")).stats->p50 = 32;
    CHECK_THAT(advice(run, "tp-communication").recommendation,
               Catch::Contains("4 of 4 TP groups span nodes (TP group 0: node0, node1): keep each TP group on one node"));
  }
}

TEST_CASE("parallel advice: rank imbalance still names a rank beside stage scores", "[parallel-advice]") {
  auto run = hybrid_run();
  run.metrics.push_back(metric("train/rank_imbalance", "%", "baseline", 30));
  run.metrics.push_back(metric("train/straggler_score", "ratio", "baseline", 0.7, {{"rank", std::int64_t{5}}, {"pp_stage", std::int64_t{1}}}));
  at(run, "train/straggler_score", stage(1)).value = 0.5;
  auto ids = fired(run);
  CHECK(std::find(ids.begin(), ids.end(), "slow-pipeline-stage") != ids.end());
  CHECK_THAT(advice(run, "rank-imbalance").evidence, Catch::Contains("the straggler is rank 5 on node2"));
}

}  // namespace parallel_advice_test

// Hybrid parallelism in scenarios: workload.parallel, its errors at their JSON
// paths, the settings a hybrid layout refuses, and the fault targets pp_stage, tp_group
// and dp_replica resolved into ranks or nodes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "bench/train/train_settings.h"
#include "harness/scenario/diagnostic.h"
#include "harness/scenario/scenario_loader.h"

namespace parallel_scenario_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::harness;

namespace {

// A train scenario on `nodes` x `rpn` ranks; `workload` is spliced into the workload
// object after its kind, `faults` is the faults array's content.
std::string train_scenario(int nodes, int rpn, const std::string& workload, const std::string& faults = "") {
  std::string s = "{\n\"schema_version\": 1, \"name\": \"t\",\n\"cluster\": {\"nodes\": " + std::to_string(nodes) +
                  ", \"ranks_per_node\": " + std::to_string(rpn) + "},\n\"workload\": {\"kind\": \"train\"" +
                  (workload.empty() ? "" : ",\n" + workload) + "}";
  if (!faults.empty()) s += ",\n\"faults\": [" + faults + "]";
  return s + "\n}";
}

std::vector<Diagnostic> errors_of(const std::string& text) {
  try {
    parse_scenario(text, "s.json");
  } catch (const ScenarioError& e) {
    return e.diagnostics();
  }
  return {};
}

// The one error of `text` (fails when there is not exactly one).
Diagnostic only_error(const std::string& text) {
  auto ds = errors_of(text);
  INFO(text);
  for (const auto& d : ds) INFO(format_diagnostic(d));
  REQUIRE(ds.size() == 1);
  return ds.front();
}

const TargetSpec& target_of(const Scenario& s, std::size_t i = 0) { return s.faults.at(i).target; }

// tp 2 x pp 2 x dp 2 on 4 nodes of 2 ranks: rank = tp_rank + 2 (dp_rank + 2 pp_stage).
const char* kHybrid = R"("parallel": {"tp": 2, "pp": 2, "dp": 2, "microbatches": 4, "schedule": "gpipe"})";

std::string fault(const std::string& type, const std::string& target, const std::string& extra = "") {
  return R"({"type": ")" + type + R"(", "at": "1s", "target": )" + target + extra + "}";
}

}  // namespace

TEST_CASE("parallel scenario: no parallel block leaves the data-parallel trainer's settings as they were",
          "[parallel-scenario]") {
  auto s = parse_scenario(train_scenario(2, 2, ""), "s.json").scenario;
  const auto& w = std::get<TrainWorkload>(s.workload);
  CHECK(w.parallel == TrainWorkload::Parallel{});
  CHECK(w == TrainWorkload{});
  auto flags = chaosbench::bench::train::encode_train_settings(w);
  CHECK(std::find(flags.begin(), flags.end(), "--tp") == flags.end());
  CHECK(std::find(flags.begin(), flags.end(), "--microbatches") == flags.end());
}

TEST_CASE("parallel scenario: a parallel block is read into the settings, and dp left out stays 0 (world / (tp x pp))",
          "[parallel-scenario]") {
  auto s = parse_scenario(train_scenario(4, 2, kHybrid), "s.json").scenario;
  const auto& p = std::get<TrainWorkload>(s.workload).parallel;
  CHECK(p.tp == 2);
  CHECK(p.pp == 2);
  CHECK(p.dp == 2);
  CHECK(p.microbatches == 4);
  CHECK(p.schedule == "gpipe");
  auto implicit = parse_scenario(train_scenario(4, 2, R"("parallel": {"tp": 2, "pp": 2})"), "s.json").scenario;
  const auto& w = std::get<TrainWorkload>(implicit.workload);
  CHECK(w.parallel.dp == 0);
  CHECK(w.parallel.schedule == "1f1b");
  auto flags = chaosbench::bench::train::encode_train_settings(w);
  CHECK(std::find(flags.begin(), flags.end(), "--tp") != flags.end());
  // Only a pair's inner width must divide by tp: layer 2 (30 wide out of 32) runs whole.
  CHECK(errors_of(train_scenario(1, 4, R"("model": {"layers": [16, 32, 30, 4]}, "parallel": {"tp": 4})")).empty());
}

TEST_CASE("parallel scenario: each inconsistency is an error at its workload.parallel path, located in the file",
          "[parallel-scenario]") {
  auto world = only_error(train_scenario(4, 2, R"("parallel": {"tp": 2, "pp": 2, "dp": 3})"));
  CHECK(world.path == "workload.parallel");
  CHECK_THAT(world.message, Catch::Contains("tp 2 × pp 2 × dp 3 is 12 ranks, but the cluster runs 8"));
  CHECK(format_diagnostic(world).starts_with("s.json:5:13: workload.parallel: "));

  auto indivisible = only_error(train_scenario(3, 2, R"("parallel": {"tp": 2, "pp": 2})"));
  CHECK(indivisible.path == "workload.parallel");
  CHECK_THAT(indivisible.message, Catch::Contains("dp defaults to world / (tp × pp)") &&
                                      Catch::Contains("6 ranks") && Catch::Contains("not a multiple of"));

  auto stages = only_error(train_scenario(4, 1, R"("model": {"layers": [8, 8, 8]}, "parallel": {"pp": 4})"));
  CHECK(stages.path == "workload.parallel.pp");
  CHECK_THAT(stages.message, Catch::Contains("4 pipeline stages but the model has 2 layers"));
  CHECK(format_diagnostic(stages).starts_with("s.json:5:52: workload.parallel.pp: "));

  auto tp = only_error(train_scenario(1, 4, R"("model": {"layers": [16, 30, 30, 4]}, "parallel": {"tp": 4})"));
  CHECK(tp.path == "workload.parallel.tp");
  CHECK_THAT(tp.message, Catch::Contains("tp 4 does not divide width 30 (workload.model.layers[1])"));

  auto micro = only_error(
      train_scenario(2, 1, R"("batch_size": 96, "parallel": {"dp": 2, "microbatches": 5})"));
  CHECK(micro.path == "workload.parallel.microbatches");
  CHECK_THAT(micro.message, Catch::Contains("48 samples per replica, which 5 microbatches do not divide"));

  auto dp = only_error(train_scenario(4, 1, R"("batch_size": 1023, "parallel": {"tp": 2})"));
  CHECK(dp.path == "workload.parallel.dp");
  CHECK_THAT(dp.message, Catch::Contains("batch_size 1023 does not split evenly over dp 2 replicas"));

  auto schedule = only_error(train_scenario(2, 1, R"("parallel": {"pp": 2, "schedule": "zigzag"})"));
  CHECK(schedule.path == "workload.parallel.schedule");
  CHECK_THAT(schedule.message, Catch::Contains("expected one of \"gpipe\", \"1f1b\", got \"zigzag\""));

  auto key = only_error(train_scenario(2, 1, R"("parallel": {"pp": 2, "micro_batches": 2})"));
  CHECK(key.path == "workload.parallel.micro_batches");
  CHECK_THAT(key.message, Catch::Contains("did you mean \"microbatches\"?"));

  auto zero = only_error(train_scenario(2, 1, R"("parallel": {"tp": 0})"));
  CHECK(zero.path == "workload.parallel.tp");
  CHECK_THAT(zero.message, Catch::Contains("got 0"));
}

TEST_CASE("parallel scenario: a hybrid layout's batch splits over replicas, not ranks", "[parallel-scenario]") {
  // 8 ranks, 2 replicas: 4 samples is 2 per replica, fine for the pipeline; without a
  // parallel block 4 samples on 8 ranks is an error, as before.
  CHECK(errors_of(train_scenario(4, 2, R"("batch_size": 4, "parallel": {"tp": 2, "pp": 2})")).empty());
  CHECK(only_error(train_scenario(4, 2, R"("batch_size": 4)")).path == "workload.batch_size");
}

TEST_CASE("parallel scenario: a bad cluster or model is one error, not a cascade of layout errors",
          "[parallel-scenario]") {
  auto cluster = only_error(train_scenario(0, 2, kHybrid, fault("rank.kill", R"({"pp_stage": [1]})")));
  CHECK(cluster.path == "cluster.nodes");
  auto model = only_error(train_scenario(4, 2, std::string(R"("model": {"layers": [8]}, )") + kHybrid));
  CHECK(model.path == "workload.model.layers");
  auto block = only_error(train_scenario(4, 2, R"("parallel": {"tp": "2", "pp": 2})",
                                         fault("rank.kill", R"({"tp_group": [3]})")));
  CHECK(block.path == "workload.parallel.tp");
}

TEST_CASE("parallel scenario: a hybrid layout refuses elastic recovery, the CUDA device, the replica check and bit flips",
          "[parallel-scenario]") {
  auto elastic = only_error(train_scenario(4, 2, std::string(kHybrid) + R"(, "recovery": {"mode": "elastic"})"));
  CHECK(elastic.path == "workload.recovery.mode");
  CHECK_THAT(elastic.message, Catch::Contains("elastic recovery does not work with a hybrid layout (tp 2, pp 2)") &&
                                  Catch::Contains("without a stage or a TP shard") && Catch::Contains("use \"restart\""));
  CHECK(errors_of(train_scenario(4, 2, std::string(kHybrid) + R"(, "recovery": {"mode": "restart"})")).empty());
  // Data-parallel only (tp = pp = 1) keeps elastic recovery.
  CHECK(errors_of(train_scenario(2, 1, R"("parallel": {"dp": 2}, "recovery": {"mode": "elastic"})")).empty());

  auto cuda = only_error(train_scenario(4, 2, std::string(kHybrid) + R"(, "device": "cuda", "backend": "nccl")"));
  CHECK(cuda.path == "workload.device");
  CHECK_THAT(cuda.message, Catch::Contains("data-parallel only") && Catch::Contains("host buffers over TCP"));

  auto sdc = only_error(train_scenario(4, 2, std::string(kHybrid) + R"(, "sdc_check_every": 1)"));
  CHECK(sdc.path == "workload.sdc_check_every");
  CHECK_THAT(sdc.message, Catch::Contains("compares whole replicas"));
  CHECK(errors_of(train_scenario(4, 2, std::string(kHybrid) + R"(, "sdc_check_every": 0)")).empty());

  auto flip = only_error(train_scenario(4, 2, kHybrid, fault("gpu.bitflip", R"({"ranks": [1]})")));
  CHECK(flip.path == "faults[0].type");
  CHECK_THAT(flip.message, Catch::Contains("gpu.bitflip") && Catch::Contains("whole replicas"));
}

TEST_CASE("parallel scenario: group targets resolve to the layout's ranks (tp 2, pp 2, dp 2)", "[parallel-scenario]") {
  const std::string faults = fault("rank.kill", R"({"pp_stage": [1]})") + ",\n" +
                             fault("gpu.slowdown", R"({"tp_group": [1, 2]})") + ",\n" +
                             fault("process.signal", R"({"dp_replica": [1]})", R"(, "signal": "SIGSTOP")") + ",\n" +
                             fault("marker", R"({"tp_group": [0]})");
  auto r = parse_scenario(train_scenario(4, 2, kHybrid, faults), "s.json");
  const auto& s = r.scenario;
  using chaosbench::faults::TargetForm;
  CHECK(target_of(s, 0).form == TargetForm::kRanks);
  CHECK(target_of(s, 0).indices == std::vector<int>{4, 5, 6, 7});
  // TP group 1: dp_rank 1 of stage 0; TP group 2: dp_rank 0 of stage 1.
  CHECK(target_of(s, 1).indices == std::vector<int>{2, 3, 4, 5});
  CHECK(target_of(s, 2).indices == std::vector<int>{2, 3, 6, 7});
  CHECK(target_of(s, 3).indices == std::vector<int>{0, 1});
  CHECK(r.warnings.empty());
}

TEST_CASE("parallel scenario: node and network faults take the nodes that hold the group, warning of other ranks",
          "[parallel-scenario]") {
  using chaosbench::faults::TargetForm;
  // 4 nodes x 2 ranks: stage 1 is nodes 2 and 3, nothing else on them.
  auto stage = parse_scenario(train_scenario(4, 2, kHybrid, fault("node.kill", R"({"pp_stage": [1]})")), "s.json");
  CHECK(target_of(stage.scenario).form == TargetForm::kNodes);
  CHECK(target_of(stage.scenario).indices == std::vector<int>{2, 3});
  CHECK(stage.warnings.empty());
  // 2 nodes x 4 ranks: replica 1 is ranks 2, 3 (node 0) and 6, 7 (node 1); a network fault
  // on those nodes also delays ranks 0, 1, 4 and 5.
  auto net = parse_scenario(
      train_scenario(2, 4, kHybrid, fault("network.delay", R"({"dp_replica": [1]})", R"(, "delay": "5ms")")), "s.json");
  CHECK(target_of(net.scenario).form == TargetForm::kNodes);
  CHECK(target_of(net.scenario).indices == std::vector<int>{0, 1});
  REQUIRE(net.warnings.size() == 1);
  CHECK(net.warnings[0].path == "faults[0].target.dp_replica");
  CHECK_THAT(net.warnings[0].message, Catch::Contains("network.delay acts on whole nodes") &&
                                          Catch::Contains("ranks 2, 3, 6, 7 but also ranks 0, 1, 4, 5"));
  // A TP group on one node of its own: no warning.
  auto tp = parse_scenario(
      train_scenario(4, 2, kHybrid, fault("network.delay", R"({"tp_group": [3]})", R"(, "delay": "5ms")")), "s.json");
  CHECK(target_of(tp.scenario).indices == std::vector<int>{3});
  CHECK(tp.warnings.empty());
}

TEST_CASE("parallel scenario: group targets without a parallel block see tp = pp = 1 and dp = world",
          "[parallel-scenario]") {
  const std::string faults = fault("rank.kill", R"({"pp_stage": [0]})") + ",\n" +
                             fault("rank.kill", R"({"dp_replica": [3]})", R"(, "name": "b")") + ",\n" +
                             fault("rank.kill", R"({"tp_group": [2]})", R"(, "name": "c")");
  auto s = parse_scenario(train_scenario(2, 2, "", faults), "s.json").scenario;
  CHECK(target_of(s, 0).indices == std::vector<int>{0, 1, 2, 3});
  CHECK(target_of(s, 1).indices == std::vector<int>{3});
  CHECK(target_of(s, 2).indices == std::vector<int>{2});
}

TEST_CASE("parallel scenario: group targets out of range, on another workload, or listed twice are errors",
          "[parallel-scenario]") {
  auto stage = only_error(train_scenario(4, 2, kHybrid, fault("rank.kill", R"({"pp_stage": [2]})")));
  CHECK(stage.path == "faults[0].target.pp_stage[0]");
  CHECK(stage.message == "pp_stage 2 does not exist: the pipeline has stages 0..1");
  auto group = only_error(train_scenario(4, 2, kHybrid, fault("rank.kill", R"({"tp_group": [0, 4]})")));
  CHECK(group.path == "faults[0].target.tp_group[1]");
  CHECK_THAT(group.message, Catch::Contains("tp_group 4 does not exist: the TP groups are 0..3"));
  auto replica = only_error(train_scenario(4, 2, kHybrid, fault("rank.kill", R"({"dp_replica": [1, 1]})")));
  CHECK(replica.path == "faults[0].target.dp_replica[1]");
  CHECK_THAT(replica.message, Catch::Contains("listed twice"));
  auto empty = only_error(train_scenario(4, 2, kHybrid, fault("rank.kill", R"({"dp_replica": []})")));
  CHECK_THAT(empty.message, Catch::Contains("non-empty array of dp_replica indices"));

  auto collective = only_error(R"({"schema_version": 1, "name": "t", "cluster": {"nodes": 2},
    "workload": {"kind": "collective"}, "faults": [{"type": "marker", "at": "1s", "target": {"pp_stage": [0]}}]})");
  CHECK(collective.path == "faults[0].target.pp_stage");
  CHECK_THAT(collective.message, Catch::Contains("name groups of a train workload's parallel layout") &&
                                     Catch::Contains("this workload is collective"));
  auto typo = only_error(train_scenario(4, 2, kHybrid, fault("rank.kill", R"({"pp_stag": [0]})")));
  CHECK_THAT(typo.message, Catch::Contains("did you mean \"pp_stage\"?"));
}

}  // namespace parallel_scenario_test

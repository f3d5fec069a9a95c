// GPU and collective faults end to end, through the real binary on a cluster of local
// processes (no root, no GPU: the trainer's fault layer acts them out on the CPU, as
// docs/gpu-faults.md describes): detection, recovery in restart and elastic mode, the
// hang watchdog, and bit flips caught by the replicas' fingerprints. Small models keep
// each run to seconds; scenarios/gpu-*.json are the full-size versions.
#include <catch2/catch.hpp>

#include <map>
#include <nlohmann/json.hpp>

#include "results_json.h"
#include "test_util.h"

namespace gpu_fault_run_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::test;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

json run_scenario(TempDir& dir, const std::string& scenario) {
  dir.write("s.json", scenario);
  auto r = run_command({binary(), "run", dir.file("s.json"), "--out", dir.file("out"), "--quiet"}, 180s);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto res = read_results(dir, "out");
  CHECK(res["verdict"] == "pass");
  return res;
}

std::map<std::string, int> start_reasons(const TempDir& dir) {
  std::map<std::string, int> reasons;
  for (const auto& e : workload_events(dir, "out", "train_start")) ++reasons[e["reason"].get<std::string>()];
  return reasons;
}

}  // namespace

TEST_CASE("gpu run: gpu.xid on one rank is reported with its code and Xid, and restart recovery resumes every rank",
          "[gpu-run]") {
  TempDir dir;
  auto res = run_scenario(dir, train_scenario(3, R"(, "steps": 120, "checkpoint": {"every_steps": 20},
      "recovery": {"mode": "restart", "max_restarts": 2})",
                                              R"([{"name": "ecc", "type": "gpu.xid", "target": {"ranks": [1]},
        "at_step": 50, "error": "ecc", "restart_after": "1s"}])",
                                              "local"));
  bool seen = false;
  for (const auto& e : workload_events(dir, "out", "failure_detected"))
    if (e["rank"] == 1 && e["reason"] == "device") {
      seen = true;
      CHECK(e["code"] == 214);
      CHECK(e["xid"] == 48);
    }
  CHECK(seen);
  CHECK(overall_value(res, "resilience/restarts") == 1.0);
  auto detect = overall_value(res, "resilience/time_to_detect");
  REQUIRE(detect);
  CHECK(*detect < 2.0);
  auto recover = overall_value(res, "resilience/time_to_recover");
  REQUIRE(recover);
  CHECK(*recover >= 1.0);  // the GPU was reset after 1 s
  CHECK(res["faults"][0]["effect"]["fired"] == 1.0);
  auto xids = metrics_named(res, "gpu/xid_events");
  REQUIRE(xids.size() == 1);
  CHECK(xids[0]["labels"]["xid"] == 48);
  CHECK(xids[0]["value"] == 1.0);
}

TEST_CASE("gpu run: gpu.xid in elastic mode: the others go on, the reset rank joins again", "[gpu-run]") {
  TempDir dir;
  auto res = run_scenario(dir, train_scenario(3, R"(, "steps": 20000, "recovery": {"mode": "elastic"})",
                                              R"([{"name": "mmu", "type": "gpu.xid", "target": {"ranks": [2]},
        "at_step": 50, "error": "illegal_address", "restart_after": "500ms"}])",
                                              "local"));
  auto lost = overall_value(res, "resilience/lost_steps");
  REQUIRE(lost);
  CHECK(*lost <= 1);
  auto reasons = start_reasons(dir);
  CHECK(reasons["recovered"] >= 1);
  CHECK(reasons["rejoined"] >= 1);
}

// A hang of the device (gpu.hang) or of the allreduce (collective.hang, which never
// returns while its peers give up and carry on) is ended by the rank's own step watchdog;
// the others recover, and the rank joins again after the reset.
TEST_CASE("gpu run: gpu.hang and collective.hang are ended by the step watchdog, the rank joins again after the reset",
          "[gpu-run]") {
  for (const char* type : {"gpu.hang", "collective.hang"}) {
    INFO(type);
    TempDir dir;
    // Enough steps that the survivors are still training when the reset rank returns (3.4 s).
    auto res = run_scenario(dir, train_scenario(3, R"(, "steps": 30000, "recovery": {"mode": "elastic", "hang_timeout": "2s"})",
                                                std::string(R"([{"name": "stuck", "type": ")") + type +
                                                    R"(", "target": {"ranks": [1]}, "at_step": 50, "restart_after": "3s"}])",
                                                "local", "1s"));
    bool watchdog = false;
    for (const auto& e : workload_events(dir, "out", "failure_detected"))
      watchdog = watchdog || (e["rank"] == 1 && e["reason"] == "hang");
    CHECK(watchdog);
    auto detect = overall_value(res, "resilience/time_to_detect");
    REQUIRE(detect);
    CHECK(*detect >= 1.0);  // nothing notices a hang before the collective timeout
    CHECK(start_reasons(dir)["recovered"] >= 1);
    CHECK(start_reasons(dir)["rejoined"] >= 1);
  }
}

// The two flips go to two ranks: one slot per fault kind and rank, so on one rank a
// harness that saw steps 20 and 50 in one batch of records armed the second over the first
// before the rank met it. And enough steps (a few seconds) that a harness slowed by a busy
// machine still arms both before the run ends: steps of this model take about a millisecond.
TEST_CASE("gpu run: a bit flip after the allreduce is caught at the next step and repaired, one before it is not",
          "[gpu-run]") {
  TempDir dir;
  auto res = run_scenario(dir, train_scenario(3, R"(, "steps": 3000)",
                                              R"([{"name": "after", "type": "gpu.bitflip", "target": {"ranks": [1]},
        "at_step": 20, "tensor": "gradients"},
      {"name": "before", "type": "gpu.bitflip", "target": {"ranks": [2]}, "at_step": 50, "tensor": "local_gradients"}])",
                                              "local"));
  auto steps = metrics_named(res, "resilience/sdc_detection_steps");
  REQUIRE(steps.size() == 1);
  CHECK(steps[0]["value"] == 1.0);
  CHECK(steps[0]["labels"]["tensor"] == "gradients");
  CHECK(overall_value(res, "resilience/sdc_caught") == 0.5);
  auto detected = workload_events(dir, "out", "sdc_detected");
  REQUIRE(detected.size() == 3);  // every rank saw the same disagreement
  for (const auto& e : detected) {
    CHECK(e["ranks"] == "1");
    CHECK(e["action"] == "repaired");
  }
  CHECK(start_reasons(dir)["repaired"] == 3);
}

TEST_CASE("gpu run: collective.error fails one allreduce, elastic recovery keeps every rank", "[gpu-run]") {
  TempDir dir;
  auto res = run_scenario(dir, train_scenario(3, R"(, "steps": 400, "recovery": {"mode": "elastic"})",
                                              R"([{"name": "nccl", "type": "collective.error", "target": {"ranks": [0]},
        "at_step": 40, "code": 6}])",
                                              "local"));
  bool coded = false;
  for (const auto& e : workload_events(dir, "out", "failure_detected"))
    coded = coded || (e["rank"] == 0 && e["code"] == 6);
  CHECK(coded);
  CHECK(start_reasons(dir)["recovered"] == 3);  // nobody left: all three form the next generation
}

}  // namespace gpu_fault_run_test

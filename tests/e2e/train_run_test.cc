// The train workload end to end, through the real binary: real ranks, real gloo, real
// checkpoints on disk, node.kill with restart and elastic recovery. Small models keep
// each run to seconds; scenarios/train-node-kill*.json are the full-size versions.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "results_json.h"
#include "test_util.h"

namespace train_run_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::test;
using namespace std::chrono_literals;
using nlohmann::json;

TEST_CASE("train: same seed and ranks, no faults: the same loss curve bit for bit, and the loss falls",
          "[train-run]") {
  TempDir dir;
  dir.write("s.json", train_scenario(2, R"(, "steps": 60)", "[]", "local"));
  std::vector<double> curves[2];
  for (int i = 0; i < 2; ++i) {
    const std::string out = "out" + std::to_string(i);
    auto r = run_command({binary(), "run", dir.file("s.json"), "--out", dir.file(out), "--quiet"}, 120s);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    auto res = read_results(dir, out);
    for (const auto& s : res["series"])
      if (s["name"] == "train/loss" && s["labels"]["rank"] == 0)
        for (const auto& v : s["v"]) curves[i].push_back(v.get<double>());
  }
  REQUIRE(curves[0].size() == 60);
  CHECK(curves[0] == curves[1]);
  CHECK(curves[0].back() < 0.5 * curves[0].front());
}

TEST_CASE("train: restart recovery after node.kill resumes every rank from the newest checkpoint", "[train-run]") {
  if (skip_without_root("node.kill on a namespaced cluster needs root")) return;
  TempDir dir;
  dir.write("s.json", train_scenario(3, R"(, "steps": 150, "checkpoint": {"every_steps": 20},
      "recovery": {"mode": "restart", "max_restarts": 2})",
                                     R"([{"name": "down", "type": "node.kill", "target": {"nodes": [1]},
        "at_step": 50, "restart_after": "1s"}])"));
  auto r = run_command({binary(), "run", dir.file("s.json"), "--out", dir.file("out"), "--quiet"}, 180s);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto res = read_results(dir, "out");
  CHECK(res["verdict"] == "pass");
  CHECK(overall_value(res, "resilience/restarts") == 1.0);
  auto recover = overall_value(res, "resilience/time_to_recover");
  REQUIRE(recover);
  CHECK(*recover >= 1.0);  // the node was down for 1 s
  auto lost = overall_value(res, "resilience/lost_steps");
  REQUIRE(lost);
  CHECK(*lost <= 20);
  auto restored = workload_events(dir, "out", "checkpoint_restored");
  REQUIRE(restored.size() == 3);  // every rank of the restart
  for (const auto& e : restored) CHECK(e["step"].get<int>() % 20 == 0);
  // Every rank ran to the last step.
  auto starts = workload_events(dir, "out", "train_start");
  CHECK(starts.size() == 6);
}

TEST_CASE("train: elastic recovery goes on without the killed rank and re-admits it", "[train-run]") {
  if (skip_without_root("node.kill on a namespaced cluster needs root")) return;
  TempDir dir;
  // Long enough that the killed rank is back (0.5 s later) well before the last step.
  dir.write("s.json", train_scenario(3, R"(, "steps": 8000, "recovery": {"mode": "elastic"})",
                                     R"([{"name": "down", "type": "node.kill", "target": {"nodes": [2]},
        "at_step": 50, "restart_after": "500ms"}])"));
  auto r = run_command({binary(), "run", dir.file("s.json"), "--out", dir.file("out"), "--quiet"}, 180s);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto res = read_results(dir, "out");
  CHECK(res["verdict"] == "pass");
  auto lost = overall_value(res, "resilience/lost_steps");
  REQUIRE(lost);
  CHECK(*lost <= 1);
  auto recover = overall_value(res, "resilience/time_to_recover");
  REQUIRE(recover);
  CHECK(*recover < 5.0);
  std::map<std::string, int> reasons;
  for (const auto& e : workload_events(dir, "out", "train_start")) ++reasons[e["reason"].get<std::string>()];
  // On a quiet machine: 3 fresh, 2 recovered (the survivors), 1 rejoined (the killed rank),
  // 2 resized. Under load a survivor can also time out, be left out and rejoin later, so
  // only what holds either way is checked.
  CHECK(reasons["fresh"] == 3);
  CHECK(reasons["recovered"] >= 1);
  CHECK(reasons["rejoined"] >= 1);
  CHECK(reasons["resized"] >= 1);
}

TEST_CASE("train: a corrupt newest checkpoint is rejected and the previous one is used, with an event",
          "[train-run]") {
  TempDir dir;
  const std::string ckpt = dir.file("ckpt");
  auto scenario = [&](int steps) {
    return train_scenario(2, R"(, "steps": )" + std::to_string(steps) + R"(, "checkpoint": {"every_steps": 20, "dir": ")" +
                                 ckpt + R"(", "full_every": 2})",
                          "[]", "local");
  };
  dir.write("first.json", scenario(60));
  auto r1 = run_command({binary(), "run", dir.file("first.json"), "--out", dir.file("out1"), "--quiet"}, 120s);
  INFO(r1.err);
  REQUIRE(r1.exit_code == 0);
  // Checkpoints at 20 (full), 40 (delta), 60 (full). Damage the newest.
  std::string newest;
  for (const auto& e : std::filesystem::directory_iterator(ckpt))
    if (e.path().filename().string().find("60.") != std::string::npos) newest = e.path().string();
  REQUIRE(!newest.empty());
  {
    std::fstream f(newest, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(std::filesystem::file_size(newest) / 2));
    f.put('\x5a');
    f.put('\xa5');
  }
  dir.write("second.json", scenario(80));
  auto r2 = run_command({binary(), "run", dir.file("second.json"), "--out", dir.file("out2"), "--quiet"}, 120s);
  INFO(r2.err);
  REQUIRE(r2.exit_code == 0);
  auto rejected = workload_events(dir, "out2", "checkpoint_rejected");
  REQUIRE(!rejected.empty());
  CHECK(rejected.front()["step"] == 60);
  auto restored = workload_events(dir, "out2", "checkpoint_restored");
  REQUIRE(restored.size() == 2);
  for (const auto& e : restored) {
    CHECK(e["step"] == 40);
    CHECK(e["fallback"] == 1);
  }
  CHECK(read_file(dir.file("out2/logs/rank0.err")).find("rejected") != std::string::npos);
}

TEST_CASE("train: restart recovery on fewer nodes when a killed node does not come back and min_nodes allows",
          "[train-run]") {
  if (skip_without_root("node.kill on a namespaced cluster needs root")) return;
  TempDir dir;
  dir.write("s.json", train_scenario(3, R"(, "steps": 150, "checkpoint": {"every_steps": 20},
      "recovery": {"mode": "restart", "min_nodes": 2})",
                                     R"([{"name": "gone", "type": "node.kill", "target": {"nodes": [2]}, "at_step": 50}])"));
  auto r = run_command({binary(), "run", dir.file("s.json"), "--out", dir.file("out"), "--quiet"}, 180s);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto res = read_results(dir, "out");
  CHECK(res["verdict"] == "pass");
  // The restart has 2 ranks, on nodes 0 and 1, and they resume from a checkpoint.
  int restarted = 0;
  for (const auto& p : res["processes"]) {
    if (p["restart"] != 1) continue;
    ++restarted;
    CHECK(p["node"] != "node2");
  }
  CHECK(restarted == 2);
  for (const auto& e : workload_events(dir, "out", "train_start"))
    if (e["attempt"] == 1) CHECK(e["world"] == 2);
  CHECK(overall_value(res, "resilience/time_to_recover").has_value());

  // Without min_nodes every node is needed: the run fails and says why.
  dir.write("all.json", train_scenario(3, R"(, "steps": 150, "recovery": {"mode": "restart"})",
                                       R"([{"name": "gone", "type": "node.kill", "target": {"nodes": [2]}, "at_step": 50}])"));
  auto f = run_command({binary(), "run", dir.file("all.json"), "--out", dir.file("fail"), "--quiet"}, 180s);
  CHECK(f.exit_code == 1);
  CHECK(read_results(dir, "fail")["reason"].get<std::string>().find("2 of 3 nodes are up and recovery.min_nodes is 3") !=
        std::string::npos);
}

}  // namespace train_run_test

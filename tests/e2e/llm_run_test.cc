// The llm workload end to end, through the real binary: built-in OpenAI-compatible
// replicas as services, the token-level load generator as the driver; TTFT, TPOT and
// goodput per phase, a replica killed under load, and find_peak's bracket.
#include <catch2/catch.hpp>

#include "results_json.h"
#include "test_util.h"

namespace llm_run_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::test;
using namespace std::chrono_literals;

namespace {

// A synthetic-engine llm workload: first token after 100 ms, then one per 10 ms.
std::string llm_scenario(const std::string& mode, const std::string& load, const std::string& faults = "[]",
                         const std::string& extra = "") {
  return R"({"schema_version": 1, "name": "llm-test", "cluster": {"nodes": 3, "mode": ")" + mode + R"("},
  "workload": {"kind": "llm", "engine": "synthetic", "port": 18600,
               "synthetic": {"first_token": "100ms", "cadence": "10ms", "tokens": 0})" + extra + R"(,
               "load": )" + load + R"(},
  "faults": )" + faults + "}";
}

std::optional<double> phase_value(const nlohmann::json& res, const std::string& name, const std::string& phase) {
  for (const auto& m : metrics_named(res, name))
    if (m["labels"].value("phase", "") == phase) return m["value"].get<double>();
  return std::nullopt;
}

}  // namespace

TEST_CASE("llm: synthetic replicas under a Poisson load give the TTFT and TPOT they were built with", "[llm-run]") {
  TempDir dir;
  dir.write("s.json", llm_scenario("local", R"({"rate": 20, "duration": "3s", "input": 32, "output": 16,
                                                "slo": {"ttft": "300ms", "tpot": "50ms"}})"));
  auto r = run_command({binary(), "run", dir.file("s.json"), "--out", dir.file("out"), "--quiet"}, 60s);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto res = read_results(dir);
  CHECK(res["verdict"] == "pass");
  const auto ttft = overall_value(res, "infer/ttft");
  REQUIRE(ttft);
  CHECK(*ttft > 99);
  CHECK(*ttft < 130);
  const auto tpot = overall_value(res, "infer/tpot");
  REQUIRE(tpot);
  CHECK(*tpot > 9.5);
  CHECK(*tpot < 11.5);
  CHECK(overall_value(res, "infer/slo_attainment").value_or(0) > 95);
  CHECK(overall_value(res, "infer/request_goodput").value_or(0) > 10);
  CHECK(overall_value(res, "infer/output_tokens_per_s").value_or(0) > 150);
  CHECK(overall_value(res, "infer/itl").has_value());
  CHECK(overall_value(res, "infer/e2e_latency").has_value());
}

TEST_CASE("llm: a replica killed under load shows in the phases and the failed streams", "[llm-run]") {
  if (skip_without_root("node.kill on a namespaced cluster needs root")) return;
  TempDir dir;
  // The fault's duration ends its phase when the replica is back (a node.kill is otherwise
  // in effect to the end of the run).
  dir.write("s.json", llm_scenario("namespaces", R"({"rate": 20, "duration": "8s", "input": 32, "output": 60,
                                                     "timeout": "5s", "slo": {"ttft": "300ms"}})",
                                   R"([{"name": "down", "type": "node.kill", "target": {"nodes": [1]},
                                        "at": "3s", "duration": "2s", "restart_after": "2s"}])"));
  auto r = run_command({binary(), "run", dir.file("s.json"), "--out", dir.file("out"), "--quiet"}, 90s);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto res = read_results(dir);
  // Streams on the killed replica were cut mid-answer: failed, and they miss the SLO.
  CHECK(phase_value(res, "infer/failed_streams", "fault:down").value_or(0) >= 1);
  const auto before = phase_value(res, "infer/slo_attainment", "baseline");
  REQUIRE(before);
  CHECK(*before > 95);
  CHECK(phase_value(res, "infer/ttft", "fault:down").has_value());
  CHECK(phase_value(res, "infer/request_goodput", "recovery:down").has_value());
  int restarted = 0;
  for (const auto& p : res["processes"]) restarted += p["restart"].get<int>() > 0;
  CHECK(restarted == 1);
}

TEST_CASE("llm: find_peak brackets the rate a replica limit allows", "[llm-run]") {
  TempDir dir;
  // One replica admitting 4 streams of ~300 ms: about 13 requests/s at most.
  dir.write("s.json", llm_scenario("local", R"({"input": 16, "output": 20, "slo": {"ttft": "200ms"},
                                                "find_peak": {"start_rate": 4, "target_attainment": 90,
                                                              "precision": 0.25, "trial": "2s", "max_trials": 8}})",
                                   "[]", R"(, "replicas": [0], "scheduler": {"max_running": 4, "max_waiting": 0})"));
  auto r = run_command({binary(), "run", dir.file("s.json"), "--out", dir.file("out"), "--quiet"}, 90s);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto res = read_results(dir);
  std::optional<double> low, high;
  for (const auto& m : metrics_named(res, "infer/peak_rate")) {
    if (m["labels"].value("phase", "") != "overall") continue;
    if (m["labels"].value("bound", "") == "low") low = m["value"].get<double>();
    if (m["labels"].value("bound", "") == "high") high = m["value"].get<double>();
  }
  REQUIRE(low);
  REQUIRE(high);
  CHECK(*low < *high);
  CHECK(*low > 4);
  CHECK(*high < 40);
}

TEST_CASE("llm: gpu faults act through the transformer engine and a lost device restarts the replica", "[llm-run]") {
  if (skip_without_root("the GPU fault control blocks need root")) return;
  TempDir dir;
  dir.write("s.json", R"({"schema_version": 1, "name": "llm-gpu", "cluster": {"nodes": 3, "mode": "local"},
    "workload": {"kind": "llm", "port": 18650, "model": {"layers": 1, "dim": 64, "heads": 4, "kv_heads": 2, "ffn": 128},
                 "load": {"rate": 10, "duration": "6s", "input": 16, "output": 16}},
    "faults": [{"name": "xid", "type": "gpu.xid", "target": {"ranks": [1]}, "at": "2s", "restart_after": "1s"}]})");
  auto r = run_command({binary(), "run", dir.file("s.json"), "--out", dir.file("out"), "--quiet"}, 60s);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto res = read_results(dir);
  int restarted = 0;
  for (const auto& p : res["processes"]) restarted += p["restart"].get<int>() > 0;
  CHECK(restarted == 1);
  CHECK_FALSE(workload_events(dir, "out", "failure_detected").empty());
  CHECK(phase_value(res, "infer/slo_attainment", "recovery:xid").value_or(0) > 90);
}

TEST_CASE("llm: the synthetic engine refuses gpu faults, it has no device", "[llm-run]") {
  TempDir dir;
  dir.write("s.json", llm_scenario("local", "{}", R"([{"name": "slow", "type": "gpu.slowdown", "at": "1s"}])"));
  auto r = run_command({binary(), "validate", dir.file("s.json")}, 20s);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out + r.err, Catch::Contains("faults[0].type") && Catch::Contains("synthetic engine has none"));
}

}  // namespace llm_run_test

// The serve workload end to end, through the real binary: KServe v2 replicas as
// services, the open-loop load generator as the driver, a replica killed under load.
#include <catch2/catch.hpp>

#include "results_json.h"
#include "test_util.h"

namespace serve_run_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::test;
using namespace std::chrono_literals;

namespace {

std::string serve_scenario(const std::string& mode, const std::string& faults, const std::string& duration) {
  return R"({"schema_version": 1, "name": "serve-test", "cluster": {"nodes": 3, "mode": ")" + mode + R"("},
  "workload": {"kind": "serve", "model": {"layers": [64, 256, 8]}, "port": 18500,
               "batching": {"max_batch_size": 32, "max_queue_delay": "1ms"},
               "load": {"scenario": "server", "qps": 200, "duration": ")" + duration + R"(", "timeout": "300ms"}},
  "faults": )" + faults + "}";
}

}  // namespace

TEST_CASE("serve: two replicas under an open-loop load, stopped when the load is done", "[serve-run]") {
  TempDir dir;
  dir.write("s.json", serve_scenario("local", "[]", "3s"));
  auto r = run_command({binary(), "run", dir.file("s.json"), "--out", dir.file("out"), "--quiet"}, 60s);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto res = read_results(dir);
  CHECK(res["verdict"] == "pass");
  auto throughput = overall_value(res, "infer/throughput");
  REQUIRE(throughput);
  CHECK(*throughput > 150);
  CHECK(*throughput < 250);
  CHECK(overall_value(res, "infer/error_rate").value_or(100) < 1);
  CHECK(overall_value(res, "infer/latency").has_value());
  CHECK(overall_value(res, "infer/batch_size").has_value());
}

TEST_CASE("serve: a replica killed under load costs under 1% errors thanks to failover", "[serve-run]") {
  if (skip_without_root("node.kill on a namespaced cluster needs root")) return;
  TempDir dir;
  dir.write("s.json", serve_scenario("namespaces",
                                     R"([{"name": "down", "type": "node.kill", "target": {"nodes": [1]},
                                          "at": "2s", "restart_after": "2s"}])",
                                     "6s"));
  auto r = run_command({binary(), "run", dir.file("s.json"), "--out", dir.file("out"), "--quiet"}, 60s);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto res = read_results(dir);
  CHECK(res["verdict"] == "pass");
  CHECK(overall_value(res, "infer/error_rate").value_or(100) < 1);
  int restarted = 0;
  for (const auto& p : res["processes"]) restarted += p["restart"].get<int>() > 0;
  CHECK(restarted == 1);
}

}  // namespace serve_run_test

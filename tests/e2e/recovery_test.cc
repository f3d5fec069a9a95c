// The runner's restart recovery for any program (workload kind command, as torchrun
// would run it): a rank that fails, and a job that stops making steps, get every rank
// restarted with CHAOSBENCH_ATTEMPT + 1; max_restarts bounds it.
#include <catch2/catch.hpp>

#include <filesystem>

#include "results_json.h"
#include "test_util.h"

namespace recovery_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::test;
using namespace std::chrono_literals;

namespace {

std::string flaky_scenario(const std::string& args, const std::string& recovery) {
  return R"({"schema_version": 1, "name": "flaky", "cluster": {"nodes": 2, "mode": "local"},
  "workload": {"kind": "command", "argv": ["python3", ")" +
         source("tests/programs/flaky_trainer.py") + R"(", )" + args + R"(],
               "recovery": )" + recovery + "}}";
}

}  // namespace

TEST_CASE("restart recovery: a failed rank restarts every rank, and the run passes", "[recovery]") {
  TempDir dir;
  dir.write("s.json", flaky_scenario(R"("--fail-rank", "1")", R"({"mode": "restart", "max_restarts": 2})"));
  auto r = run_command({binary(), "run", dir.file("s.json"), "--out", dir.file("out"), "--quiet"}, 60s);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto res = read_results(dir);
  CHECK(res["verdict"] == "pass");
  CHECK(overall_value(res, "resilience/restarts") == 1.0);
  CHECK(std::filesystem::exists(dir.file("out/logs/rank0.restart1.err")));
  CHECK(std::filesystem::exists(dir.file("out/logs/rank1.restart1.err")));
}

TEST_CASE("restart recovery: a job that stops making steps is restarted after hang_timeout", "[recovery]") {
  TempDir dir;
  dir.write("s.json", flaky_scenario(R"("--hang-rank", "0")",
                                     R"({"mode": "restart", "max_restarts": 1, "hang_timeout": "1s"})"));
  auto r = run_command({binary(), "run", dir.file("s.json"), "--out", dir.file("out"), "--quiet"}, 60s);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.seconds < 30);  // not the 600 s sleep
  auto res = read_results(dir);
  CHECK(res["verdict"] == "pass");
  CHECK(overall_value(res, "resilience/restarts") == 1.0);
  CHECK(read_file(dir.file("out/timeline.jsonl")).find("no rank reported a step for 1s") != std::string::npos);
}

TEST_CASE("restart recovery: max_restarts used up fails the run with the reason", "[recovery]") {
  TempDir dir;
  dir.write("s.json", flaky_scenario(R"("--fail-rank", "1")", R"({"mode": "restart", "max_restarts": 0})"));
  auto r = run_command({binary(), "run", dir.file("s.json"), "--out", dir.file("out"), "--quiet"}, 60s);
  CHECK(r.exit_code == 1);
  auto res = read_results(dir);
  CHECK(res["verdict"] == "fail");
  CHECK(res["reason"].get<std::string>().find("max_restarts (0) are used up") != std::string::npos);
}

}  // namespace recovery_test

// Sweeps: the grid, validation of every point before anything runs, and a real sweep of
// the trainer with its comparison and recommendation.
#include <catch2/catch.hpp>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "harness/scenario/scenario_loader.h"
#include "harness/scenario/sweep.h"
#include "test_util.h"

namespace sweep_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::harness;
using namespace chaosbench::test;
using namespace std::chrono_literals;

TEST_CASE("sweep: the grid is the Cartesian product, the last axis fastest", "[sweep]") {
  auto points = sweep_points({{"workload.batch_size", {"512", "1024"}}, {"workload.bucket_size", {"\"1MiB\"", "\"4MiB\""}}});
  REQUIRE(points.size() == 4);
  CHECK(points[0].label == "batch_size=512 bucket_size=1MiB");
  CHECK(points[1].label == "batch_size=512 bucket_size=4MiB");
  CHECK(points[3].label == "batch_size=1024 bucket_size=4MiB");
  CHECK(points[2].overrides == std::vector<std::string>{"workload.batch_size=1024", "workload.bucket_size=\"1MiB\""});
  CHECK(sweep_points({}).empty());
}

TEST_CASE("sweep: a point that is not a valid scenario is an error at the sweep, before anything runs", "[sweep]") {
  const std::string text = R"({"schema_version": 1, "name": "x", "cluster": {"nodes": 4}, "workload": {"kind": "train"},
  "sweep": {"workload.batch_size": [1024, 2]}})";
  try {
    parse_scenario(text, "s.json");
    FAIL("accepted");
  } catch (const ScenarioError& e) {
    const auto& d = e.diagnostics().front();
    CHECK(d.path == "sweep");
    CHECK(d.line == 2);
    CHECK_THAT(d.message, Catch::Contains("point 2 (batch_size=2)") && Catch::Contains("smaller than the 4 ranks"));
  }
  CHECK_THROWS_AS(parse_scenario(R"({"schema_version": 1, "name": "x", "workload": {"kind": "train"},
  "sweep": {"workload.steps": []}})", "s.json"), ScenarioError);
}

TEST_CASE("sweep: every point runs with its own reports, and the best passing one is recommended", "[sweep]") {
  TempDir dir;
  dir.write("s.json", R"({"schema_version": 1, "name": "sw", "cluster": {"nodes": 2, "mode": "local"},
  "workload": {"kind": "train", "model": {"layers": [32, 128, 4]}, "batch_size": 64, "steps": 40},
  "sweep": {"workload.batch_size": [32, 128]}})");
  auto r = run_command({binary(), "run", dir.file("s.json"), "--out", dir.file("out")}, 120s);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  for (const char* point : {"point-01", "point-02"}) {
    CHECK(std::filesystem::exists(dir.file(std::string("out/") + point + "/results.json")));
    CHECK(std::filesystem::exists(dir.file(std::string("out/") + point + "/summary.md")));
  }
  auto sweep = nlohmann::json::parse(read_file(dir.file("out/sweep.json")));
  REQUIRE(sweep["points"].size() == 2);
  CHECK(sweep["objective"] == "train/throughput");
  REQUIRE(sweep["best"].is_number());
  CHECK_THAT(sweep["recommendation"].get<std::string>(), Catch::Contains("best passing point"));
  CHECK_THAT(read_file(dir.file("out/sweep.md")), Catch::Contains("| batch_size=32 |") || Catch::Contains("batch_size=32"));
  CHECK_THAT(r.out, Catch::Contains("sweep sw: 2 points"));
}

}  // namespace sweep_test

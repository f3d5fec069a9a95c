// `chaosbench bench micro` through the binary: a filtered, short run of the tool-cost rows
// writes a results.json that the run model reads back, with the catalogue's units and
// positive values; a filter that matches nothing is a usage error. No root.
#include <catch2/catch.hpp>

#include <chrono>
#include <set>
#include <string>

#include "reports/model/json_io.h"
#include "results_json.h"
#include "test_util.h"

namespace micro_bench_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

namespace {

using namespace chaosbench::test;
using namespace std::chrono_literals;

TEST_CASE("bench micro writes the tool-cost metrics into results.json", "[micro]") {
  TempDir dir;
  auto r = run_command({binary(), "bench", "micro", "--filter", "scenario_parse|ingest", "--min-time", "0.01", "--out",
                        dir.file("out"), "--scenario", source("scenarios/demo.json")},
                       60s);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("bench/scenario_parse") != std::string::npos);  // Google Benchmark's table

  auto results = read_results(dir);
  CHECK(results["verdict"] == "pass");
  CHECK(results["scenario"]["name"] == "micro");
  std::set<std::string> benchmarks;
  for (const auto& m : results["metrics"]) {
    INFO(m.dump());
    CHECK(m["labels"]["phase"] == "overall");
    CHECK(m["value"].get<double>() > 0);
    benchmarks.insert(m["labels"]["benchmark"].get<std::string>());
  }
  CHECK(benchmarks == std::set<std::string>{"bench/scenario_parse", "bench/ingest_rate/path:socket",
                                            "bench/ingest_rate/path:decode"});
  auto parse = metrics_named(results, "bench/scenario_parse");
  REQUIRE(parse.size() == 1);
  CHECK(parse[0]["unit"] == "us");
  CHECK(parse[0]["better"] == "lower");
  auto ingest = metrics_named(results, "bench/ingest_rate");
  REQUIRE(ingest.size() == 2);
  CHECK(ingest[0]["unit"] == "records/s");
  CHECK(ingest[0]["better"] == "higher");
  // The run model reads it back (what `chaosbench report` will do).
  auto model = chaosbench::reports::from_json(read_file(dir.file("out/results.json")));
  CHECK(model.scenario_name == "micro");
  CHECK(model.metrics.size() == 3);
}

TEST_CASE("bench micro rejects a filter that matches nothing", "[micro]") {
  TempDir dir;
  auto r = run_command({binary(), "bench", "micro", "--filter", "no-such-benchmark", "--out", dir.file("out")}, 30s);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);
}

}  // namespace

}  // namespace micro_bench_test

// Bencher Metric Format (reports/render/bmf_report.h): benchmark and measure names, the bounds
// only where they hold the value, and what is left out rather than cut.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "reports/render/bmf_report.h"

namespace bmf_report_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::reports;

namespace {

MetricRecord record(std::string name, Labels labels, double value, std::optional<Stats> stats = std::nullopt) {
  MetricRecord r;
  r.name = std::move(name);
  r.labels = std::move(labels);
  r.value = value;
  r.stats = stats;
  return r;
}

Stats spread(std::uint64_t n, double min, double max) {
  Stats s;
  s.n = n;
  s.min = min;
  s.max = max;
  return s;
}

}  // namespace

TEST_CASE("bmf: scenario/phase and the sorted labels name the benchmark, the metric the measure", "[bmf]") {
  RunResult run;
  run.scenario_name = "demo";
  run.metrics.push_back(record("comm/latency", {{"phase", std::string("baseline")}, {"bytes", std::int64_t{4096}},
                                                {"collective", std::string("allreduce")}},
                               812.5, spread(10, 640, 1503)));
  run.metrics.push_back(record("train/throughput", {{"phase", std::string("overall")}}, 7000, spread(1, 7000, 7000)));
  run.metrics.push_back(record("ckpt/size", {{"phase", std::string("overall")}}, 900, spread(3, 100, 400)));  // a sum
  const auto bmf = nlohmann::json::parse(render_bmf(run));
  const auto& latency = bmf.at("demo/baseline [bytes=4096, collective=allreduce]").at("comm/latency");
  CHECK(latency.at("value") == 812.5);
  CHECK(latency.at("lower_value") == 640);
  CHECK(latency.at("upper_value") == 1503);
  CHECK_FALSE(bmf.at("demo/overall").at("train/throughput").contains("lower_value"));  // one sample
  CHECK_FALSE(bmf.at("demo/overall").at("ckpt/size").contains("upper_value"));         // the value is outside them
}

TEST_CASE("bmf: values that are not finite and names past Bencher's limits are left out", "[bmf]") {
  RunResult run;
  run.scenario_name = "demo";
  run.metrics.push_back(record("a/nan", {{"phase", std::string("overall")}}, std::numeric_limits<double>::quiet_NaN()));
  run.metrics.push_back(record(std::string(65, 'm'), {{"phase", std::string("overall")}}, 1));
  run.metrics.push_back(record("a/long", {{"phase", std::string("overall")}, {"x", std::string(1100, 'x')}}, 1));
  run.metrics.push_back(record("a/ok", {{"phase", std::string("overall")}}, 2));
  const auto bmf = nlohmann::json::parse(render_bmf(run));
  REQUIRE(bmf.size() == 1);
  CHECK(bmf.at("demo/overall").size() == 1);
  CHECK(bmf.at("demo/overall").at("a/ok").at("value") == 2);
}

TEST_CASE("bmf: a combined result's bounds are the runs' smallest and largest value", "[bmf]") {
  RunResult run;
  run.scenario_name = "demo";
  auto r = record("train/throughput", {{"phase", std::string("overall")}}, 31000, spread(1200, 100, 90000));
  r.runs = RunValues{{30500, 31000, 31800}, {}, {}};
  run.metrics.push_back(r);
  auto one = record("train/loss", {{"phase", std::string("overall")}}, 0.2);
  one.runs = RunValues{{0.2}, {}, {}};  // one run: no spread, no stats: no bounds
  run.metrics.push_back(one);
  const auto j = nlohmann::json::parse(render_bmf(run));
  const auto& m = j["demo/overall"]["train/throughput"];
  CHECK(m["value"] == 31000);
  CHECK(m["lower_value"] == 30500);
  CHECK(m["upper_value"] == 31800);
  CHECK_FALSE(j["demo/overall"]["train/loss"].contains("lower_value"));
}

}  // namespace bmf_report_test

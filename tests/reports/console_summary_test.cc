#include <catch2/catch.hpp>

#include "reports/render/console_summary.h"
#include "reports/model/text_format.h"

namespace console_summary_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::reports;

TEST_CASE("console: fault windows are summarised against the baseline", "[console]") {
  RunResult run;
  run.scenario_name = "s";
  run.verdict = Verdict::kPass;
  run.phases = {{"baseline", 0, 1}, {"fault:slow", 1, 2}, {"recovery:slow", 2, 3}};
  auto rec = [](const char* phase, double v) {
    return MetricRecord{"train/step_time", "ms", chaosbench::common::Better::kLower, {{"phase", std::string(phase)}, {"rank", std::int64_t{0}}}, v, {}};
  };
  run.metrics = {rec("baseline", 10), rec("fault:slow", 25), rec("recovery:slow", 11), rec("overall", 14)};
  FaultRecord f;
  f.name = "slow";
  f.type = "network.delay";
  f.targets = {"node1"};
  f.applied_at_s = 1.0;
  f.reverted_at_s = 2.0;
  f.backend = "nfqueue";
  run.faults = {f};
  auto text = console_summary(run, "/out");
  // Each fault with the backend that did it.
  CHECK_THAT(text, Catch::Contains("network.delay") && Catch::Contains("1.00s to 2.00s") &&
                       Catch::Contains("backend nfqueue"));
  CHECK_THAT(text, Catch::Contains("fault:slow"));
  CHECK_THAT(text, Catch::Contains("train/step_time x2.5 (1 series)"));
  CHECK_THAT(text, Catch::Contains("train/step_time x1.1 (1 series)"));
  CHECK_THAT(text, Catch::Contains("results: /out/results.json"));
  CHECK(format_value(0.68123, "GB/s") == "0.681 GB/s");
  CHECK(format_value(812.4, "us") == "812 us");
}

}  // namespace console_summary_test

// The fault envelope's random-schedule keys: arrivals, probability, after + delay,
// exclusive — what they accept and the errors (with the JSON path) for what they refuse.
#include <catch2/catch.hpp>

#include "harness/scenario/scenario_loader.h"

namespace scenario_soak_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::harness;

namespace {

std::string with_faults(const std::string& f) {
  return R"({"schema_version": 1, "name": "t", "cluster": {"nodes": 4}, "workload": {"kind": "collective"}, "faults": [)" +
         f + "]}";
}

// Every error line, joined: "file:line:col: path: message".
std::string errors(const std::string& text) {
  try {
    parse_scenario(text, "s.json");
  } catch (const ScenarioError& e) {
    std::string out;
    for (const auto& d : e.diagnostics()) out += format_diagnostic(d) + "\n";
    return out;
  }
  return "";
}

}  // namespace

TEST_CASE("scenario: random arrivals, probability, chains and exclusive faults are read", "[scenario][soak]") {
  auto s = parse_scenario(with_faults(R"(
    {"name": "kill", "type": "node.kill", "target": {"random": 1}, "restart_after": "2s", "duration": "3s",
     "arrivals": {"process": "poisson", "mtbf": "30s", "max_occurrences": 40}, "probability": 0.5, "exclusive": true},
    {"name": "slow", "type": "network.delay", "delay": "5ms", "after": {"fault": "kill", "delay": "1s"}, "duration": "1s"},
    {"name": "w", "type": "marker", "arrivals": {"process": "weibull", "scale": "1m", "shape": 0.7}, "duration": "1s"})"),
                          "s.json").scenario;
  REQUIRE(s.faults.size() == 3);
  const auto& k = s.faults[0];
  REQUIRE(k.arrivals);
  CHECK(k.arrivals->process == ArrivalSpec::Process::kPoisson);
  CHECK(k.arrivals->mtbf.seconds() == Approx(30));
  CHECK(k.arrivals->max_occurrences == 40);
  CHECK(k.at->seconds() == 0);  // arrivals start at 0s unless "at" says otherwise
  CHECK(*k.probability == 0.5);
  CHECK(k.exclusive);
  CHECK(*s.faults[1].after == "kill");
  CHECK(s.faults[1].delay->seconds() == Approx(1));
  CHECK(s.faults[2].arrivals->process == ArrivalSpec::Process::kWeibull);
  CHECK(s.faults[2].arrivals->shape == Approx(0.7));
  CHECK(s.faults[2].arrivals->max_occurrences == 1000);
}

TEST_CASE("scenario: bad random schedules are errors at their JSON path", "[scenario][soak]") {
  const std::string arrivals = R"({"type": "marker", "duration": "1s", "arrivals": )";
  CHECK_THAT(errors(with_faults(arrivals + R"({"process": "poisson", "mtbf": "0s"}})")),
             Catch::Contains("faults[0].arrivals.mtbf: the MTBF must be above zero, got \"0s\""));
  CHECK_THAT(errors(with_faults(arrivals + R"({"process": "poisson", "mtbf": "-5s"}})")),
             Catch::Contains("faults[0].arrivals.mtbf:"));
  CHECK_THAT(errors(with_faults(arrivals + R"({"process": "poisson", "mtbf": -5}})")),
             Catch::Contains("faults[0].arrivals.mtbf: the MTBF must be a duration above zero"));
  CHECK_THAT(errors(with_faults(arrivals + R"({"process": "weibull", "scale": "0ms", "shape": 1}})")),
             Catch::Contains("faults[0].arrivals.scale: the Weibull scale must be above zero"));
  CHECK_THAT(errors(with_faults(arrivals + R"({"process": "weibull", "scale": "1s", "shape": 0}})")),
             Catch::Contains("faults[0].arrivals.shape: expected a number from 0.1 to 10, got 0"));
  CHECK_THAT(errors(with_faults(arrivals + R"({"process": "gamma", "mtbf": "1s"}})")),
             Catch::Contains("faults[0].arrivals.process"));
  CHECK_THAT(errors(with_faults(R"({"type": "marker", "arrivals": {"process": "poisson", "mtbf": "1s"}})")),
             Catch::Contains("faults[0].arrivals: random arrivals need a \"duration\""));
  CHECK_THAT(errors(with_faults(R"({"type": "marker", "at": "1s", "probability": 1.5})")),
             Catch::Contains("faults[0].probability: expected a probability from 0 to 1, got 1.5"));
  CHECK_THAT(errors(with_faults(R"({"type": "marker", "at": "1s", "probability": -0.1})")),
             Catch::Contains("faults[0].probability: expected a probability from 0 to 1"));
  CHECK_THAT(errors(with_faults(R"({"type": "marker", "at": "1s", "probability": "half"})")),
             Catch::Contains("faults[0].probability:"));
}

TEST_CASE("scenario: an exclusive fault needs a duration, and the schedule holds at most 10000 occurrences",
          "[scenario][soak]") {
  CHECK_THAT(errors(with_faults(R"({"type": "marker", "at": "1s", "exclusive": true})")),
             Catch::Contains("faults[0].exclusive: an exclusive fault needs a \"duration\""));
  const std::string soak = R"({"type": "marker", "duration": "1s",
                               "arrivals": {"process": "poisson", "mtbf": "1s", "max_occurrences": 6000}})";
  CHECK(errors(with_faults(soak)).empty());
  CHECK_THAT(errors(with_faults(soak + ", " + soak)),
             Catch::Contains("faults[1]: the faults up to this one plan up to 12000 occurrences; at most 10000"));
  CHECK_THAT(errors(with_faults(R"({"name": "a", "type": "marker", "duration": "1s",
                                    "arrivals": {"process": "poisson", "mtbf": "1s", "max_occurrences": 6000}},
                                   {"type": "marker", "after": "a", "duration": "1s"})")),
             Catch::Contains("faults[1]: the faults up to this one plan up to 12000"));
}

TEST_CASE("scenario: after chains name a fault and make no cycle", "[scenario][soak]") {
  auto cycle = errors(with_faults(R"({"name": "a", "type": "marker", "after": "c"},
                                      {"name": "b", "type": "marker", "after": "a"},
                                      {"name": "c", "type": "marker", "after": "b"})"));
  CHECK_THAT(cycle, Catch::Contains("faults[0].after: the chain of \"after\" is a cycle: a after c after b after a"));
  CHECK_THAT(errors(with_faults(R"({"name": "a", "type": "marker", "after": "a"})")),
             Catch::Contains("faults[0].after: the chain of \"after\" is a cycle: a after a"));
  CHECK_THAT(errors(with_faults(R"({"name": "a", "type": "marker", "at": "1s"}, {"name": "b", "type": "marker", "after": "aa"})")),
             Catch::Contains("faults[1].after: no fault is named \"aa\" (did you mean \"a\"?)"));
  CHECK_THAT(errors(with_faults(R"({"type": "marker", "at": "1s", "after": "x"})")),
             Catch::Contains("give exactly one trigger"));
  CHECK_THAT(errors(with_faults(R"({"type": "marker", "at": "1s", "delay": "1s"})")),
             Catch::Contains("faults[0].delay: unknown key"));
  CHECK_THAT(errors(with_faults(R"({"type": "marker", "name": "a", "at": "1s"}, {"type": "marker", "after": {"delay": "1s"}})")),
             Catch::Contains("faults[1].after: missing required key \"fault\""));
  CHECK_THAT(errors(with_faults(R"({"type": "marker", "at_step": 3, "duration": "1s",
                                    "arrivals": {"process": "poisson", "mtbf": "1s"}})")),
             Catch::Contains("faults[0].arrivals: random \"arrivals\" start at \"at\""));
}

}  // namespace scenario_soak_test

// The realised fault schedule (harness/plan/schedule_plan.h) and the schedule rules it
// brings: random arrivals, probability, per-occurrence random targets, `after` chains,
// exclusive faults. The distribution of the arrivals is checked against SciPy by
// tests/schedule/kstest.py; here: determinism, bounds and the rules.
#include <catch2/catch.hpp>
#include <set>

#include "harness/plan/fault_schedule.h"
#include "harness/plan/schedule_plan.h"
#include "harness/plan/schedule_text.h"
#include "reports/model/schedule_json.h"

namespace schedule_plan_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::harness;
namespace reports = chaosbench::reports;
using namespace std::chrono_literals;

namespace {

Duration d(std::chrono::nanoseconds ns) { return Duration{ns}; }

FaultSpec marker(std::string name) {
  FaultSpec f;
  f.name = std::move(name);
  f.type = "marker";
  return f;
}

FaultSpec soak(double mtbf_s, int max, std::optional<double> probability = std::nullopt) {
  FaultSpec f = marker("kill");
  f.type = "node.kill";
  f.arrivals = ArrivalSpec{ArrivalSpec::Process::kPoisson, d(std::chrono::milliseconds(static_cast<int>(mtbf_s * 1000))),
                           1.0, max};
  f.at = d(0s);
  f.duration = d(100ms);
  f.probability = probability;
  f.target.form = chaosbench::faults::TargetForm::kRandom;
  f.target.count = 1;
  return f;
}

// a: at 1s and 6s for 1s each; b: `delay` after each of a's, for `duration`.
std::pair<FaultSpec, FaultSpec> chain(Duration delay, Duration duration) {
  FaultSpec a = marker("a");
  a.at = d(1s);
  a.duration = d(1s);
  a.repeat = RepeatSpec{d(5s), 2};
  FaultSpec b = marker("b");
  b.after = "a";
  b.delay = delay;
  b.duration = duration;
  return {a, b};
}

}  // namespace

TEST_CASE("plan: the same seed gives the same schedule, another seed another", "[schedule]") {
  const std::vector<FaultSpec> faults{soak(5, 50, 0.5)};
  auto a = reports::schedule_to_json(schedule_entries(faults, plan_schedule(faults, 4, 7, 1e6))).dump();
  auto b = reports::schedule_to_json(schedule_entries(faults, plan_schedule(faults, 4, 7, 1e6))).dump();
  auto c = reports::schedule_to_json(schedule_entries(faults, plan_schedule(faults, 4, 8, 1e6))).dump();
  CHECK(a == b);
  CHECK(a != c);
}

TEST_CASE("plan: arrivals stop at max_occurrences and at the horizon", "[schedule]") {
  const std::vector<FaultSpec> faults{soak(1, 100)};
  CHECK(plan_schedule(faults, 4, 1, 1e6).size() == 100);
  auto short_plan = plan_schedule(faults, 4, 1, 10.0);
  CHECK(short_plan.size() < 30);
  for (const auto& o : short_plan) CHECK(*o.due_s <= 10.0);
  double mean = 0;
  auto plan = plan_schedule({soak(2, 2000)}, 4, 3, 1e9);
  mean = *plan.back().arrival_s / static_cast<double>(plan.size());
  CHECK(mean == Approx(2.0).epsilon(0.1));  // 2000 draws: the mean within ~5 %
}

TEST_CASE("plan: probability fires about that share (seeded), and random targets are drawn per occurrence",
          "[schedule]") {
  auto plan = plan_schedule({soak(1, 1000, 0.3)}, 8, 11, 1e9);
  int fired = 0;
  std::set<int> nodes;
  for (const auto& o : plan) {
    fired += o.fires ? 1 : 0;
    REQUIRE(o.nodes.size() == 1);
    nodes.insert(o.nodes[0]);
  }
  CHECK(fired > 250);
  CHECK(fired < 350);
  CHECK(nodes.size() == 8);  // every node gets picked over 1000 draws
  // Occurrence 1 picks what a single fault always picked (the resolver's choice).
  CHECK(plan[0].nodes == pick_nodes(8, 1, 11, 0, 1));
  CHECK(FaultSchedule({soak(1, 1000, 0.3)}, plan).occurrences().size() == static_cast<std::size_t>(fired));
}

TEST_CASE("schedule: an after chain fires delay after each applied occurrence of its parent", "[schedule]") {
  auto [a, b] = chain(d(500ms), d(200ms));
  std::vector<FaultSpec> faults{b, a};  // the chained one first: order in the file does not matter
  auto plan = plan_schedule(faults, 2, 1, 100);
  REQUIRE(plan.size() == 4);
  FaultSchedule s(faults, plan);
  CHECK(s.due(10, -1).size() == 1);  // only a#1: b waits for a's application
  s.mark_applied(2, 1.2);            // a#1 applied late
  CHECK(*s.trigger_time(0) == Approx(1.7));
  auto due = s.due(1.7, -1);
  REQUIRE(due.size() == 1);
  CHECK(due[0].occurrence == 0);
}

TEST_CASE("schedule: an exclusive fault waits for the others and holds them off", "[schedule]") {
  FaultSpec a = marker("a");
  a.at = d(1s);
  a.duration = d(2s);
  FaultSpec b = marker("b");
  b.at = d(2s);
  b.duration = d(1s);
  b.exclusive = true;
  FaultSpec c = marker("c");
  c.at = d(3500ms);
  c.duration = d(1s);
  std::vector<FaultSpec> faults{a, b, c};
  auto lines = describe_schedule(faults, plan_schedule(faults, 2, 1, 100), 100);
  REQUIRE(lines.size() == 3);
  CHECK_THAT(lines[0], Catch::Contains("applied 1.000s, reverted 3.000s"));
  CHECK_THAT(lines[1], Catch::Contains("applied 3.000s (waited for an occurrence in effect to end), reverted 4.000s"));
  CHECK_THAT(lines[2], Catch::Contains("applied 4.000s (waited"));
}

TEST_CASE("schedule: a chain whose parent failed is over", "[schedule]") {
  FaultSpec a = marker("a");
  a.at = d(1s);
  FaultSpec b = marker("b");
  b.after = "a";
  std::vector<FaultSpec> faults{a, b};
  FaultSchedule s(faults, plan_schedule(faults, 2, 1, 100));
  CHECK_FALSE(s.finished());
  s.mark_failed(0);
  CHECK(s.finished());
}

TEST_CASE("schedule: a chained occurrence whose parent failed does not hold up the next", "[schedule]") {
  auto [a, b] = chain(d(0s), d(500ms));
  std::vector<FaultSpec> faults{a, b};
  FaultSchedule s(faults, plan_schedule(faults, 2, 1, 100));
  s.mark_failed(0);        // a#1 could not be applied: b#1 never comes
  s.mark_applied(1, 6.0);  // a#2
  auto due = s.due(6.0, -1);
  REQUIRE(due.size() == 1);
  CHECK(due[0].occurrence == 3);  // b#2
  CHECK(*s.next_deadline() == Approx(6.0));
}

}  // namespace schedule_plan_test

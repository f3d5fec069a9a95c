#include <catch2/catch.hpp>

#include "harness/plan/fault_schedule.h"

namespace fault_schedule_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::harness;
using namespace std::chrono_literals;

namespace {

FaultSpec fault(std::optional<Duration> at, std::optional<std::int64_t> step, std::optional<Duration> duration,
                std::optional<RepeatSpec> repeat = std::nullopt) {
  FaultSpec f;
  f.name = "f";
  f.type = "marker";
  f.at = at;
  f.at_step = step;
  f.duration = duration;
  f.repeat = repeat;
  return f;
}

Duration d(std::chrono::nanoseconds ns) { return Duration{ns}; }

}  // namespace

TEST_CASE("schedule: at triggers apply on time and revert after their duration", "[schedule]") {
  FaultSchedule s({fault(d(1s), std::nullopt, d(500ms))});
  CHECK(s.due(0.99, -1).empty());
  auto a = s.due(1.0, -1);
  REQUIRE(a.size() == 1);
  CHECK(a[0].kind == ScheduledAction::kApply);
  s.mark_applied(0, 1.0);
  CHECK(s.due(1.49, -1).empty());
  CHECK(*s.next_deadline() == Approx(1.5));
  auto r = s.due(1.5, -1);
  REQUIRE(r.size() == 1);
  CHECK(r[0].kind == ScheduledAction::kRevert);
  s.mark_reverted(0, 1.5);
  CHECK(s.due(100, 1000).empty());
  CHECK_FALSE(s.next_deadline().has_value());
}

TEST_CASE("schedule: at_step triggers wait for the step event", "[schedule]") {
  FaultSchedule s({fault(std::nullopt, 150, d(1s))});
  CHECK(s.due(1000, 149).empty());
  REQUIRE(s.due(1000, 150).size() == 1);
}

TEST_CASE("schedule: repeats are spaced by every and never overlap", "[schedule]") {
  FaultSchedule s({fault(d(1s), std::nullopt, d(1s), RepeatSpec{d(2s), 3})});
  REQUIRE(s.occurrences().size() == 3);
  CHECK(*s.occurrences()[1].due_s == Approx(3.0));
  CHECK(*s.occurrences()[2].due_s == Approx(5.0));
  // Late tick: occurrence 1 applied late; occurrence 2 must wait for its revert.
  s.mark_applied(0, 2.9);
  auto a = s.due(3.0, -1);
  CHECK(a.empty());
  auto b = s.due(3.9, -1);
  REQUIRE(b.size() == 2);
  CHECK(b[0].kind == ScheduledAction::kRevert);
  CHECK(b[1].kind == ScheduledAction::kApply);
  CHECK(b[1].occurrence == 1);
}

TEST_CASE("schedule: faults without duration stay until the end", "[schedule]") {
  FaultSchedule s({fault(d(0s), std::nullopt, std::nullopt)});
  s.mark_applied(0, 0.0);
  CHECK(s.due(1e6, -1).empty());
  CHECK(s.any_active());
}

}  // namespace fault_schedule_test

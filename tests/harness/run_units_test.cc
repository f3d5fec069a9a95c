// The run driver's units on a fake node site: no processes, no namespaces, no clock.
#include <catch2/catch.hpp>

#include <csignal>
#include <fstream>
#include <sstream>

#include "fake_node_site.h"
#include "harness/run/fault_driver.h"
#include "harness/run/rank_table.h"
#include "harness/run/recovery.h"
#include "test_util.h"

namespace run_units_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench;
using namespace chaosbench::harness;
using namespace std::chrono_literals;

namespace {

FaultSpec fault(std::string name, std::string type, double at_s, std::optional<double> duration_s = std::nullopt) {
  FaultSpec f;
  f.name = std::move(name);
  f.type = std::move(type);
  f.at = Duration{std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(at_s))};
  if (duration_s)
    f.duration = Duration{std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(*duration_s))};
  return f;
}

void restart_after(FaultSpec& f, std::chrono::nanoseconds d) { f.restart_after = Duration{d}; }

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

RankLaunch launch(int rank, int node) {
  RankLaunch l;
  l.rank = rank;
  l.node = node;
  l.spec.argv = {"worker"};
  l.spec.stdout_path = "/out/logs/rank" + std::to_string(rank) + ".out";
  l.spec.stderr_path = "/out/logs/rank" + std::to_string(rank) + ".err";
  return l;
}

// The driver's world: a fake site, a clock the test moves, a timeline in a temp dir.
struct World {
  test::TempDir dir;
  test::FakeNodeSite site;
  double now = 0;
  std::vector<std::string> errors;
  TimelineLog timeline{dir.file("timeline.jsonl")};
  std::vector<FaultSpec> specs;
  std::unique_ptr<FaultDriver> driver;

  explicit World(std::vector<FaultSpec> faults) : specs(std::move(faults)) {
    driver = std::make_unique<FaultDriver>(specs, site, timeline, [this] { return now; },
                                           [this](const std::string& e) { errors.push_back(e); });
  }
  std::vector<FaultEffect> tick(double t, std::vector<RankProcess> ranks = {{0, 0, 1000}}) {
    now = t;
    return driver->run_due(t, -1, [ranks] { return ranks; }, nullptr);
  }
};

}  // namespace

TEST_CASE("fault driver (fake site): applies on time, reverts after the duration, records both", "[runner-units]") {
  World w({fault("slow", "marker", 1.0, 2.0)});
  CHECK(w.tick(0.5).empty());
  auto effects = w.tick(1.0002);
  REQUIRE(effects.size() == 1);
  CHECK(effects[0].fault == "slow");
  CHECK(w.site.applied == std::vector<std::string>{"slow"});
  const auto& rec = w.driver->records().at(0);
  CHECK(rec.backend == "fake");
  CHECK(rec.targets == std::vector<std::string>{"rank0"});
  REQUIRE(rec.apply_latency_us);
  CHECK(*rec.apply_latency_us == Approx(200).margin(1));
  CHECK(w.driver->active_names() == std::vector<std::string>{"slow"});
  w.tick(2.9);
  CHECK(w.site.reverts["slow"] == 0);
  w.tick(3.0002);
  CHECK(w.site.reverts["slow"] == 1);
  CHECK(w.driver->records().at(0).reverted_at_s == Approx(3.0002));
  CHECK(w.driver->records().at(0).effect.at("reverts") == 1);
  CHECK(w.driver->active_names().empty());
  CHECK(w.driver->any_reverted());
  const auto timeline = read(w.dir.file("timeline.jsonl"));
  CHECK(timeline.find("\"event\":\"fault_applied\"") != std::string::npos);
  CHECK(timeline.find("\"event\":\"fault_reverted\"") != std::string::npos);
  CHECK(w.errors.empty());
}

TEST_CASE("fault driver (fake site): a fault that cannot be applied is an error, recorded once", "[runner-units]") {
  World w({fault("broken", "marker", 0.0, 1.0)});
  w.site.failing_faults = {"broken"};
  CHECK(w.tick(0.0).empty());
  REQUIRE(w.errors.size() == 1);
  CHECK(w.errors[0] == "fault broken (marker) could not be applied: no such device");
  CHECK(w.driver->records().at(0).error == "no such device");
  CHECK(w.driver->records().at(0).targets == std::vector<std::string>{"rank0"});  // named even so
  CHECK(w.driver->schedule().occurrences().at(0).state == OccurrenceState::kFailed);
  w.tick(5.0);  // never reverted, never retried
  CHECK(w.site.reverts["broken"] == 0);
  CHECK(w.errors.size() == 1);
}

TEST_CASE("fault driver (fake site): revert_all unwinds the newest fault first, repair only what is in effect",
          "[runner-units]") {
  World w({fault("a", "marker", 1.0), fault("b", "marker", 2.0)});
  w.tick(1.0);
  w.tick(2.0);
  CHECK(w.driver->active_names() == std::vector<std::string>{"a", "b"});
  w.driver->revert_all();
  CHECK(w.site.reverts["a"] == 1);
  CHECK(w.site.reverts["b"] == 1);
  CHECK(w.driver->records()[1].reverted_at_s <= w.driver->records()[0].reverted_at_s);
  w.driver->repair(0);  // already reverted: nothing more
  CHECK(w.site.reverts["a"] == 1);
}

TEST_CASE("fault driver (fake site): what a kill did: restart_after, or the node gone for good", "[runner-units]") {
  auto kill = fault("down", "node.kill", 1.0);
  restart_after(kill, 3s);
  World w({kill, fault("gone", "node.kill", 2.0)});
  w.site.ended_by_faults = {1000};
  w.site.faults_reversible = false;
  auto first = w.tick(1.0);
  REQUIRE(first.size() == 1);
  CHECK(first[0].ended == std::vector<pid_t>{1000});
  REQUIRE(first[0].restart_at_s);
  CHECK(*first[0].restart_at_s == Approx(4.0));
  CHECK_FALSE(first[0].repair_before_restart);
  CHECK_FALSE(first[0].node_gone);
  auto second = w.tick(2.0);
  REQUIRE(second.size() == 1);
  CHECK_FALSE(second[0].restart_at_s);
  CHECK(second[0].node_gone);
  CHECK(w.driver->any_active(faults::kNodeGone));  // irreversible: done only at the end
}

TEST_CASE("rank table (fake site): starts on the launch's node, records exits, names restart logs", "[runner-units]") {
  test::FakeNodeSite site;
  RankTable ranks(site, "/out");
  ranks.plan({launch(0, 0), launch(1, 1)}, 0);
  for (std::size_t i = 0; i < 2; ++i) ranks.start(i, ranks.launches()[i].spec, [] { return 0.1; });
  CHECK(site.started == std::vector<std::pair<int, pid_t>>{{0, 1000}, {1, 1001}});
  CHECK(ranks.records()[1].stdout_log == "logs/rank1.out");
  CHECK(ranks.node_of_rank(1) == 1);
  ranks.expect_exit(1001);
  site.exit(1001, std::nullopt, SIGKILL);
  const auto* rec = ranks.record_exit(1001, 2.0);
  REQUIRE(rec);
  CHECK(rec->ended_by_fault);
  CHECK(rec->signal == SIGKILL);
  CHECK(ranks.record_exit(1001, 3.0) == nullptr);  // once
  CHECK(ranks.processes()[1].pid == -1);
  CHECK(ranks.unended() == std::vector<pid_t>{1000});
  ranks.count_restart(1);
  const auto& again = ranks.start(1, ranks.launches()[1].spec, [] { return 5.0; });
  CHECK(again.restart == 1);
  CHECK(again.stdout_log == "logs/rank1.restart1.out");
}

TEST_CASE("recovery (fake site): a rank a fault ended comes back at restart_after, not into a frozen node",
          "[runner-units]") {
  auto kill = fault("down", "node.kill", 1.0);
  restart_after(kill, 2s);
  World w({kill});
  RankTable ranks(w.site, "/out");
  ranks.plan({launch(0, 0), launch(1, 1)}, 0);
  std::vector<std::string> events;
  Recovery::Hooks hooks;
  hooks.now = [&] { return w.now; };
  hooks.start_rank = [&](std::size_t idx) { ranks.start(idx, ranks.launches()[idx].spec, [&] { return w.now; }); };
  hooks.replan = [](const std::vector<int>&) { FAIL("no restart of every rank in elastic mode"); };
  hooks.event = [&](const std::string& name, bench::Labels) { events.push_back(name); };
  hooks.fail = [](const std::string& reason) { FAIL(reason); };
  RecoverySpec spec;
  spec.mode = RecoveryMode::kElastic;
  Recovery recovery(spec, 2, ranks, w.site, *w.driver, hooks);
  for (std::size_t i = 0; i < 2; ++i) hooks.start_rank(i);
  w.site.ended_by_faults = {1001};
  w.site.faults_reversible = false;
  for (const auto& e : w.tick(1.0, ranks.processes())) recovery.on_fault(e);
  w.site.exit(1001, std::nullopt, SIGKILL);
  CHECK(recovery.restart_pending());
  w.now = 2.5;
  recovery.tick(w.now, std::nullopt);
  CHECK(w.site.started.size() == 2);  // not yet
  w.site.frozen_nodes = {1};
  w.now = 3.1;
  recovery.tick(w.now, std::nullopt);
  CHECK(w.site.started.size() == 2);  // due, but its node is frozen
  w.site.frozen_nodes.clear();
  w.now = 3.2;
  recovery.tick(w.now, std::nullopt);
  REQUIRE(w.site.started.size() == 3);
  CHECK(w.site.started.back().first == 1);
  CHECK(ranks.restarts(1) == 1);
  CHECK(events == std::vector<std::string>{"restart"});
  CHECK_FALSE(recovery.restart_pending());
}

TEST_CASE("recovery (fake site): restart mode stops every rank, SIGKILLs stragglers, then starts attempt 1",
          "[runner-units]") {
  World w({});
  RankTable ranks(w.site, "/out");
  ranks.plan({launch(0, 0), launch(1, 1)}, 0);
  std::vector<std::vector<int>> replans;
  Recovery::Hooks hooks;
  hooks.now = [&] { return w.now; };
  hooks.start_rank = [&](std::size_t idx) { ranks.start(idx, ranks.launches()[idx].spec, [&] { return w.now; }); };
  hooks.event = [](const std::string&, bench::Labels) {};
  hooks.fail = [](const std::string& reason) { FAIL(reason); };
  RecoverySpec spec;
  spec.mode = RecoveryMode::kRestart;
  std::unique_ptr<Recovery> recovery;
  hooks.replan = [&](const std::vector<int>& nodes) {
    replans.push_back(nodes);
    ranks.plan({launch(0, 0), launch(1, 1)}, recovery->attempt());
  };
  recovery = std::make_unique<Recovery>(spec, 2, ranks, w.site, *w.driver, hooks);
  for (std::size_t i = 0; i < 2; ++i) hooks.start_rank(i);
  w.now = 5.0;
  w.site.exit(1000, 1);
  recovery->on_rank_failed("rank 0 exited with code 1");
  CHECK(recovery->restarting());
  CHECK(w.site.signals == std::vector<std::pair<pid_t, int>>{{1001, SIGTERM}});
  w.now = 6.0;
  recovery->tick(w.now, std::nullopt);  // rank 1 still runs, within its grace
  CHECK(w.site.signals.size() == 1);
  w.now = 7.1;
  recovery->tick(w.now, std::nullopt);  // past the grace: SIGKILL
  CHECK(w.site.signals.back() == std::pair<pid_t, int>{1001, SIGKILL});
  w.site.exit(1001, std::nullopt, SIGKILL);
  w.now = 7.2;
  recovery->tick(w.now, std::nullopt);
  CHECK(recovery->attempt() == 1);
  REQUIRE(replans.size() == 1);
  CHECK(replans[0] == std::vector<int>{0, 1});
  CHECK(w.site.started.size() == 4);
  CHECK(ranks.restarts(0) == 1);
  CHECK_FALSE(recovery->restarting());
}

}  // namespace run_units_test

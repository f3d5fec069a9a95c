// The probe engine as logic, with scripted checks: modes, the stop condition's streak,
// steady state before the first fault, records. Intervals are 20-50 ms; assertions are on
// what was decided, never on how fast.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>

#include "harness/probes/probe_engine.h"

namespace probe_engine_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench;
using namespace chaosbench::harness;
using namespace std::chrono_literals;

namespace {

// Returns ok while `*ok` says so; counts its evaluations.
class ScriptedCheck final : public probes::ProbeCheck {
 public:
  ScriptedCheck(std::atomic<bool>* ok, std::atomic<int>* calls) : ok_(ok), calls_(calls) {}
  probes::ProbeOutcome evaluate(double) override {
    ++*calls_;
    const bool ok = ok_->load();
    return {ok, ok ? 0.0 : 1.0, ok ? "fine" : "broken"};
  }

 private:
  std::atomic<bool>* ok_;
  std::atomic<int>* calls_;
};

ProbeSpec probe(const std::string& name, ProbeMode mode, const std::string& during = "") {
  ProbeSpec p;
  p.name = name;
  p.mode = mode;
  p.during = during;
  p.interval = common::Duration{20ms};
  p.timeout = common::Duration{100ms};
  return p;
}

struct Bench {
  std::vector<ProbeSpec> specs;
  std::optional<AbortSpec> abort;
  std::atomic<bool> ok{true};
  std::atomic<int> calls{0};
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  std::unique_ptr<ProbeEngine> engine;

  void make() {
    ProbeEngine::Hooks hooks;
    hooks.now_s = [this] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
    hooks.now_wall = [] { return 0.0; };
    engine = std::make_unique<ProbeEngine>(
        specs, abort, [this](const ProbeSpec&) { return std::make_unique<ScriptedCheck>(&ok, &calls); },
        std::move(hooks));
  }
  template <typename Pred>
  bool eventually(Pred pred, std::chrono::milliseconds limit = 3000ms) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
      if (pred()) return true;
      std::this_thread::sleep_for(5ms);
    }
    return pred();
  }
};

}  // namespace

TEST_CASE("probe engine: a failing probe of abort.when decides the stop condition after abort.for", "[probe_engine]") {
  Bench b;
  b.specs = {probe("err", ProbeMode::kContinuous)};
  b.abort = AbortSpec{{"err"}, common::Duration{100ms}};
  b.make();
  b.engine->start();
  REQUIRE(b.eventually([&] { return b.calls.load() >= 3; }));
  CHECK_FALSE(b.engine->abort_decided());
  b.ok = false;
  REQUIRE(b.eventually([&] { return b.engine->abort_decided(); }));
  b.engine->stop();
  const auto d = b.engine->abort_decision();
  REQUIRE(d);
  CHECK(d->cause == "err");
  CHECK(d->evidence.find("broken") != std::string::npos);
  const auto records = b.engine->records();
  REQUIRE(records.size() == 1);
  CHECK(records[0].failures >= 2);  // the first failure starts the streak, a later one ends it
  REQUIRE(records[0].transitions.size() == 2);
  CHECK(records[0].transitions[0].ok);
  CHECK_FALSE(records[0].transitions[1].ok);
  // Decided by due times (0.1 s apart at least); evaluations end with a little jitter.
  CHECK(d->decided_s - records[0].transitions[1].t >= 0.09);
}

TEST_CASE("probe engine: a continuous probe that never passed is starting, and aborts nothing", "[probe_engine]") {
  Bench b;
  b.specs = {probe("err", ProbeMode::kContinuous)};
  b.abort = AbortSpec{{"err"}, common::Duration{0ms}};
  b.ok = false;
  b.make();
  b.engine->start();
  REQUIRE(b.eventually([&] { return b.calls.load() >= 5; }));
  CHECK_FALSE(b.engine->abort_decided());
  b.ok = true;  // up at last
  REQUIRE(b.eventually([&] { return b.engine->records()[0].transitions.size() >= 2; }));
  b.ok = false;
  REQUIRE(b.eventually([&] { return b.engine->abort_decided(); }));
}

TEST_CASE("probe engine: a probe outside abort.when never aborts", "[probe_engine]") {
  Bench b;
  b.specs = {probe("watch", ProbeMode::kContinuous), probe("err", ProbeMode::kAfter)};
  b.abort = AbortSpec{{"err"}, common::Duration{0ms}};
  b.ok = false;
  b.make();
  b.engine->start();
  REQUIRE(b.eventually([&] { return b.calls.load() >= 5; }));
  CHECK_FALSE(b.engine->abort_decided());  // "err" is not active before the faults are over
  b.engine->faults_finished();
  REQUIRE(b.eventually([&] { return b.engine->abort_decided(); }));
  CHECK(b.engine->abort_decision()->cause == "err");
}

TEST_CASE("probe engine: during:FAULT evaluates only while that fault is in effect", "[probe_engine]") {
  Bench b;
  b.specs = {probe("d", ProbeMode::kDuring, "slow")};
  b.make();
  b.engine->start();
  std::this_thread::sleep_for(100ms);
  CHECK(b.calls.load() == 0);
  b.engine->fault_active("other", true);
  std::this_thread::sleep_for(60ms);
  CHECK(b.calls.load() == 0);
  b.engine->fault_active("slow", true);
  REQUIRE(b.eventually([&] { return b.calls.load() >= 2; }));
  b.engine->fault_active("slow", false);
  std::this_thread::sleep_for(50ms);  // an evaluation under way may still finish
  const int after = b.calls.load();
  std::this_thread::sleep_for(100ms);
  CHECK(b.calls.load() <= after + 1);
  b.engine->stop();
  const auto record = b.engine->records()[0];
  CHECK(record.evaluations >= 2);
  REQUIRE(record.transitions.size() == 2);  // its first outcome, then the end of its window
  CHECK(record.transitions[0].active);
  CHECK_FALSE(record.transitions[1].active);
}

TEST_CASE("probe engine: steady state is the before probes' latest outcome", "[probe_engine]") {
  SECTION("steady") {
    Bench b;
    b.specs = {probe("ready", ProbeMode::kBefore)};
    b.make();
    b.engine->start();
    std::string why;
    CHECK(b.engine->steady_state(&why));
    b.engine->faults_started();
    std::this_thread::sleep_for(50ms);
    const int calls = b.calls.load();
    std::this_thread::sleep_for(100ms);
    CHECK(b.calls.load() <= calls + 1);  // before probes end with the first fault
  }
  SECTION("not steady") {
    Bench b;
    b.specs = {probe("ready", ProbeMode::kBefore)};
    b.ok = false;
    b.make();
    b.engine->start();
    std::string why;
    CHECK_FALSE(b.engine->steady_state(&why));
    CHECK(why.find("probe ready failed before the first fault: broken") != std::string::npos);
  }
  SECTION("no before probe") {
    Bench b;
    b.specs = {probe("c", ProbeMode::kContinuous)};
    b.ok = false;
    b.make();
    CHECK_FALSE(b.engine->has_before_probes());
    std::string why;
    CHECK(b.engine->steady_state(&why));
  }
}

TEST_CASE("probe engine: a pass between failures restarts the streak", "[probe_engine]") {
  Bench b;
  b.specs = {probe("err", ProbeMode::kContinuous)};
  b.abort = AbortSpec{{"err"}, common::Duration{std::chrono::seconds(30)}};
  b.make();
  b.engine->start();
  for (int i = 0; i < 3; ++i) {
    b.ok = false;
    std::this_thread::sleep_for(60ms);
    b.ok = true;
    std::this_thread::sleep_for(60ms);
  }
  b.engine->stop();
  CHECK_FALSE(b.engine->abort_decided());
  CHECK(b.engine->records()[0].transitions.size() >= 5);
}

}  // namespace probe_engine_test

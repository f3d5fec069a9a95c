// Fault::apply rolls back a fault that fails halfway, once, for every type: a test-only
// fault makes two changes (each journaled first) and fails before its third.
#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "faults/fault.h"

namespace fault_rollback_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::faults;

namespace {

// Remembers which entries are open: recorded and not yet done.
class RecordingLog final : public UndoLog {
 public:
  std::uint64_t record(const std::string&, std::map<std::string, std::string>) override {
    open.insert(++last);
    return last;
  }
  void done(std::uint64_t id) override {
    CHECK(open.erase(id) == 1);  // each entry is closed once
  }
  std::set<std::uint64_t> open;
  std::uint64_t last = 0;
};

// Applies `changes` changes, each journaled before it is made, and throws `error` before
// the one numbered `fail_at` (0-based); never when fail_at >= changes. do_revert undoes
// what it made, newest first, and counts its calls.
class HalfwayFault final : public Fault {
 public:
  HalfwayFault(int changes, int fail_at, bool std_error = false)
      : changes_(changes), fail_at_(fail_at), std_error_(std_error) {}

  bool revert_fails = false;  // do_revert undoes nothing and throws
  std::string backend() const override { return "test"; }

  int reverts = 0;
  std::vector<int> in_effect;  // the changes now made

 private:
  void do_apply(const ResolvedTarget&) override {
    for (int i = 0; i < changes_; ++i) {
      if (i == fail_at_) {
        if (std_error_) throw std::runtime_error("change " + std::to_string(i) + " failed");
        throw FaultError("change " + std::to_string(i) + " failed");
      }
      entries_.push_back(log().record("write", {{"change", std::to_string(i)}}));
      in_effect.push_back(i);
    }
  }
  void do_revert() override {
    ++reverts;
    if (revert_fails) throw FaultError("cannot undo");
    while (!in_effect.empty()) {
      in_effect.pop_back();
      log().done(entries_.back());
      entries_.pop_back();
    }
  }

  int changes_, fail_at_;
  bool std_error_;
  std::vector<std::uint64_t> entries_;
};

}  // namespace

TEST_CASE("fault: a fault failing halfway is rolled back once by Fault::apply", "[fault]") {
  RecordingLog log;
  HalfwayFault fault(3, 2);
  CHECK_THROWS_WITH(fault.apply(ResolvedTarget{}, log), "change 2 failed");
  CHECK(fault.reverts == 1);
  CHECK(fault.in_effect.empty());
  CHECK(log.open.empty());  // both journaled changes were closed by the rollback
  CHECK(log.last == 2);
  CHECK_FALSE(fault.applied());
  fault.revert();  // nothing is applied: no second undo
  CHECK(fault.reverts == 1);
}

TEST_CASE("fault: an error of do_apply keeps its type after the rollback", "[fault]") {
  RecordingLog log;
  HalfwayFault fault(2, 1, /*std_error=*/true);
  CHECK_THROWS_MATCHES(fault.apply(ResolvedTarget{}, log), std::runtime_error,
                       Catch::Predicate<std::runtime_error>(
                           [](const std::runtime_error& e) { return dynamic_cast<const FaultError*>(&e) == nullptr; }));
  CHECK(fault.reverts == 1);
  CHECK(log.open.empty());
}

TEST_CASE("fault: a fault that applies is not rolled back, and revert undoes it once", "[fault]") {
  RecordingLog log;
  HalfwayFault fault(2, 99);
  fault.apply(ResolvedTarget{}, log);
  CHECK(fault.applied());
  CHECK(fault.reverts == 0);
  CHECK(log.open.size() == 2);
  fault.revert();
  fault.revert();  // idempotent: the base calls do_revert once
  CHECK(fault.reverts == 1);
  CHECK(log.open.empty());
}

TEST_CASE("fault: a rollback that fails too is said in the error, not swallowed", "[fault]") {
  RecordingLog log;
  HalfwayFault fault(2, 1);
  fault.revert_fails = true;
  CHECK_THROWS_WITH(fault.apply(ResolvedTarget{}, log), "change 1 failed; rolling back: cannot undo");
  CHECK(fault.reverts == 1);
  CHECK(log.open.size() == 1);  // left in the journal, for cleanup
  CHECK_FALSE(fault.applied());
}

}  // namespace fault_rollback_test

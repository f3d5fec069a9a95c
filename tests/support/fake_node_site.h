// A node site with no processes and no host: for testing the run driver's units (the
// fault driver, the rank table, recovery) as pure logic. "Processes" are numbers whose
// state the test sets; "faults" are FakeFaults that record what was done to them.
#pragma once

#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "faults/undo_log.h"
#include "harness/site/node_site.h"

namespace chaosbench::test {

// A fault that does nothing but count; its ended processes and backend are the site's.
class FakeFault final : public faults::Fault {
 public:
  FakeFault(std::vector<pid_t> ended, bool reversible, int* reverts)
      : ended_(std::move(ended)), reversible_(reversible), reverts_(reverts) {}
  bool reversible() const override { return reversible_; }
  std::string backend() const override { return "fake"; }
  std::vector<pid_t> ended_processes() const override { return ended_; }
  std::map<std::string, double> effect() const override { return {{"reverts", *reverts_}}; }

 private:
  void do_apply(const faults::ResolvedTarget&) override {}
  void do_revert() override { ++*reverts_; }
  std::vector<pid_t> ended_;
  bool reversible_;
  int* reverts_;
};

class FakeNodeSite final : public harness::NodeSite {
 public:
  // --- what the test sets ---
  std::set<std::string> failing_faults;  // fault names whose apply throws
  std::vector<pid_t> ended_by_faults;    // what every applied fault says it ended
  bool faults_reversible = true;
  std::set<int> frozen_nodes;
  std::set<int> oom_nodes;
  // --- what the test reads ---
  std::vector<std::string> applied;     // fault names, in order of application
  std::map<std::string, int> reverts;   // by fault name
  std::vector<std::pair<int, pid_t>> started;  // (node, pid)
  std::vector<std::pair<pid_t, int>> signals;  // (pid, signal)

  // Ends a fake process as the test says.
  void exit(pid_t pid, std::optional<int> code, std::optional<int> signal = std::nullopt) {
    auto& st = status_.at(pid);
    st.running = false;
    st.exit_code = code;
    st.signal = signal;
  }

  pid_t start(int node, harness::ProcessSpec) override {
    const pid_t pid = next_pid_++;
    status_[pid] = harness::ProcessStatus{pid, true, std::nullopt, std::nullopt};
    started.emplace_back(node, pid);
    return pid;
  }
  void signal(pid_t pid, int sig) override { signals.emplace_back(pid, sig); }
  const harness::ProcessStatus& status(pid_t pid) const override { return status_.at(pid); }
  bool any_running() const override {
    for (const auto& [pid, st] : status_)
      if (st.running) return true;
    return false;
  }
  std::vector<pid_t> wait_any(std::chrono::milliseconds) override { return {}; }
  std::vector<std::string> stop_all() override {
    for (auto& [pid, st] : status_) st.running = false;
    return {};
  }
  std::string address(int node) const override { return "10.0.0." + std::to_string(node + 1); }
  int free_port(int) override { return 29500; }
  std::string control_block(int rank) override { return "/fake/rank" + std::to_string(rank) + ".ctl"; }
  std::unique_ptr<faults::Fault> apply_fault(const harness::FaultSpec& spec, std::size_t,
                                             const std::vector<harness::RankProcess>& ranks,
                                             std::vector<std::string>* targets) override {
    targets->clear();
    for (const auto& r : ranks) targets->push_back("rank" + std::to_string(r.rank));
    if (failing_faults.count(spec.name)) throw std::runtime_error("no such device");
    auto fault = std::make_unique<FakeFault>(ended_by_faults, faults_reversible, &reverts[spec.name]);
    fault->apply(faults::ResolvedTarget{}, log_);
    applied.push_back(spec.name);
    return fault;
  }
  bool frozen(int node) const override { return frozen_nodes.count(node) > 0; }
  bool oom_killed(int node) const override { return oom_nodes.count(node) > 0; }

 private:
  std::map<pid_t, harness::ProcessStatus> status_;
  pid_t next_pid_ = 1000;
  faults::NullUndoLog log_;
};

}  // namespace chaosbench::test

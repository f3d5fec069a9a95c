#include "faults/node/node_pause.h"

#include <chrono>
#include <csignal>
#include <fmt/format.h>
#include <thread>

#include "faults/node/sysfs_file.h"

namespace chaosbench::faults {

std::span<const ParamSpec> NodePauseFault::params() { return {}; }

void NodePauseFault::do_apply(const ResolvedTarget& target) {
  auto freezer = target.cgroups.find("freezer");
  if (freezer != target.cgroups.end() && !freezer->second.empty()) {
    backend_ = "freezer cgroup";
    // echo FROZEN > <node>/freezer.state; undo: echo THAWED > <node>/freezer.state
    for (const auto& dir : freezer->second) {
      entries_.push_back(log().record("write", {{"path", dir + "/freezer.state"}, {"value", "THAWED"}}));
      write_setting(dir + "/freezer.state", "FROZEN");
      frozen_.push_back(dir);
    }
    // v1 passes through FREEZING; the fault is in effect once every task is frozen.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    for (const auto& dir : frozen_) {
      while (read_setting(dir + "/freezer.state") != "FROZEN") {
        if (std::chrono::steady_clock::now() > deadline) {
          do_revert();
          throw FaultError(fmt::format("{} did not reach FROZEN within 2 s", dir));
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    }
    return;
  }
  backend_ = "signal";
  for (std::size_t i = 0; i < target.pids.size(); ++i) {
    pid_t pgid = target.pids[i];
    std::uint64_t start = i < target.pid_start_times.size() ? target.pid_start_times[i] : 0;
    auto id = log().record("signal_group",
                           {{"pgid", std::to_string(pgid)}, {"start_time", std::to_string(start)}, {"signal", std::to_string(SIGCONT)}});
    ::kill(-pgid, SIGSTOP);
    stopped_.emplace_back(pgid, id);
  }
}

void NodePauseFault::do_revert() {
  // Every node is thawed even when one fails; a failed one stays in the journal.
  std::string errors;
  for (std::size_t i = 0; i < frozen_.size(); ++i) {
    try {
      write_setting(frozen_[i] + "/freezer.state", "THAWED");
      log().done(entries_[i]);
    } catch (const FaultError& e) {
      errors += (errors.empty() ? "" : "; ") + std::string(e.what());
    }
  }
  for (const auto& [pgid, id] : stopped_) {
    ::kill(-pgid, SIGCONT);
    log().done(id);
  }
  frozen_.clear();
  stopped_.clear();
  entries_.clear();
  if (!errors.empty()) throw FaultError(errors);
}

}  // namespace chaosbench::faults

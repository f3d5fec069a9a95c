#include "faults/node/node_pause.h"

#include <chrono>
#include <csignal>
#include <fmt/format.h>
#include <thread>

#include "common/kernel/cgroup_files.h"
#include "common/kernel/sysfs_file.h"

namespace chaosbench::faults {

namespace {

constexpr std::string_view kFreezerNeeds[] = {"cgroup.freezer"};
constexpr BackendOption kOptions[] = {{"freezer cgroup", kFreezerNeeds}, {"signal", {}}};
constexpr BackendChoice kBackends{"", kOptions};

}  // namespace

std::span<const ParamSpec> NodePauseFault::params() { return {}; }
const BackendChoice& NodePauseFault::backends() { return kBackends; }

void NodePauseFault::do_apply(const ResolvedTarget& target) {
  auto freezer = target.cgroups.find("freezer");
  if (freezer != target.cgroups.end() && !freezer->second.empty()) {
    version_ = target.cgroup_version;
    backend_ = std::string(common::cgroup_backend(version_, common::CgroupKnob::kFreeze));
    const auto control = std::string(common::cgroup_file(version_, common::CgroupKnob::kFreeze));
    const auto state = std::string(common::cgroup_file(version_, common::CgroupKnob::kFreezeState));
    // v1: echo FROZEN > <node>/freezer.state; undo: echo THAWED > <node>/freezer.state
    // v2: echo 1 > <node>/cgroup.freeze;      undo: echo 0 > <node>/cgroup.freeze
    for (const auto& dir : freezer->second) {
      const std::string thawed(common::freeze_value(version_, false));
      entries_.push_back(log().record("write", {{"path", dir + "/" + control}, {"value", thawed}}));
      frozen_.push_back(dir);  // before the write: a failed write is thawed and closed too
      common::write_setting(dir + "/" + control, std::string(common::freeze_value(version_, true)));
    }
    // v1 passes through FREEZING, v2 reports "frozen 1" in cgroup.events once done; the
    // fault is in effect once every task is frozen.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    for (const auto& dir : frozen_) {
      while (!common::freeze_done(version_, common::read_setting(dir + "/" + state))) {
        if (std::chrono::steady_clock::now() > deadline) {  // Fault::apply thaws what froze
          throw FaultError(fmt::format("{} did not reach {} within 2 s", dir, version_ == 2 ? "\"frozen 1\"" : "FROZEN"));
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
      common::write_setting(frozen_[i] + "/" + std::string(common::cgroup_file(version_, common::CgroupKnob::kFreeze)),
                    std::string(common::freeze_value(version_, false)));
      log().done(entries_[i]);
    } catch (const std::exception& e) {
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

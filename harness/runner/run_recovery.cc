// What the runner does when a rank fails, by workload.recovery.mode:
//   restart  every rank is stopped and started again (attempt + 1), as torchrun does:
//            when the failed node is back (node.kill's restart_after), on the remaining
//            nodes when it is not and recovery.min_nodes allows, at most max_restarts
//            times; also when no rank reported a step for recovery.hang_timeout;
//   elastic  the workload carries on; a rank killed with restart_after is started again
//            and joins (restart_due in runner.cc);
//   none     a failed rank fails the run (runner.cc).
// The harness's own view goes into the record store as events of rank -1
// (failure_detected, restart), where the resilience metrics are derived from.
#include <algorithm>
#include <csignal>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "harness/runner/run.h"

namespace chaosbench::harness {

// How long a rank stopped for a restart may take to finish its checkpoint and exit.
constexpr double kStopGraceS = 2.0;

void Run::harness_event(const std::string& name, bench::Labels fields) {
  bench::Event e;
  e.rank = -1;
  e.time = bench::wall_time_now();
  e.name = name;
  e.fields = std::move(fields);
  store_.add(e, e.time);
  std::vector<TimelineField> timeline;
  for (const auto& [k, v] : e.fields) timeline.emplace_back(k, TimelineLog::value(v));
  timeline_->write(now_s(), "harness_" + name, timeline);
}

void Run::on_rank_failed(const std::string& reason) {
  // A killed node comes back when its node.kill said so: every rank restarts then, not
  // before (the first exit seen may be a peer's, failing because of the kill).
  double at = now_s();
  absorb_pending_restarts(at);  // the restart of every rank replaces the fault's own
  begin_group_restart(reason, at);
}

// Pending restarts of single ranks become part of the restart of every rank: it waits
// for the latest of them, and repairs (reverts) their faults first.
void Run::absorb_pending_restarts(double& at_s) {
  for (const auto& p : pending_restarts_) {
    at_s = std::max(at_s, p.at_s);
    if (p.revert_occurrence) reverts_before_restart_.push_back(*p.revert_occurrence);
  }
  pending_restarts_.clear();
}

void Run::begin_group_restart(const std::string& reason, double at_s) {
  if (attempt_ >= recovery_.max_restarts) {
    fail(fmt::format("{}, and recovery.max_restarts ({}) are used up", reason, recovery_.max_restarts));
    return;
  }
  harness_event("failure_detected", {{"reason", reason}});
  spdlog::warn("{}: stopping every rank; all restart {}", reason,
               at_s > now_s() ? fmt::format("at {:.3f}s, when the node is back", at_s) : std::string("now"));
  // SIGTERM first, as torchrun: a rank finishes the checkpoint it is writing; one still
  // running after the grace period (stuck in a collective, or frozen) gets SIGKILL.
  for (std::size_t i = 0; i < pids_.size(); ++i) {
    const pid_t pid = pids_[i];
    if (pid <= 0 || !supervisor_.status(pid).running) continue;
    expected_exits_.insert(pid);
    supervisor_.signal(pid, SIGTERM);
  }
  group_restart_at_ = at_s;
  group_kill_at_ = now_s() + kStopGraceS;
}

void Run::group_restart_due(double t) {
  if (!group_restart_at_) return;
  // A node killed (with restart_after) while this restart was pending is waited for as
  // well: its own restart would otherwise start a second process for a rank.
  absorb_pending_restarts(*group_restart_at_);
  bool running = false;
  for (std::size_t i = 0; i < pids_.size(); ++i) {
    if (pids_[i] <= 0 || !supervisor_.status(pids_[i]).running) continue;
    running = true;
    if (group_kill_at_ && t >= *group_kill_at_) supervisor_.signal(pids_[i], SIGKILL);
  }
  if (group_kill_at_ && t >= *group_kill_at_) group_kill_at_.reset();
  if (running || *group_restart_at_ > t) return;  // every old rank is gone first
  std::vector<int> nodes;
  for (int n = 0; n < scenario_.cluster.nodes; ++n)
    if (!nodes_down_.count(n)) nodes.push_back(n);
  for (int n : nodes)
    if (node_frozen(n)) return;  // a process started into a frozen node would hang: wait
  const int needed = recovery_.min_nodes.value_or(scenario_.cluster.nodes);
  group_restart_at_.reset();
  if (static_cast<int>(nodes.size()) < needed) {
    fail(fmt::format("cannot restart: {} of {} nodes are up and recovery.min_nodes is {}", nodes.size(),
                     scenario_.cluster.nodes, needed));
    return;
  }
  for (auto occurrence : reverts_before_restart_)
    if (faults_[occurrence] && faults_[occurrence]->applied()) revert(occurrence);
  reverts_before_restart_.clear();
  ++attempt_;
  launch_ctx_.only_nodes = nodes;
  launches_ = plan_workload(scenario_, launch_ctx_);
  pids_.assign(launches_.size(), -1);
  restarts_.assign(launches_.size(), attempt_);
  harness_event("restart", {{"attempt", static_cast<std::int64_t>(attempt_)},
                            {"ranks", static_cast<std::int64_t>(launches_.size())}});
  spdlog::info("restart {}: {} ranks on nodes {}", attempt_, launches_.size(), fmt::join(nodes, ","));
  attempt_started_s_ = now_s();
  for (std::size_t i = 0; i < launches_.size(); ++i) start_rank(i);
}

// Armed once the current attempt has reported something (start-up, a rendezvous and a
// checkpoint restore take what they take; the scenario's timeout bounds those); any
// event counts as progress, so a long checkpoint save is not a hang.
void Run::check_hang(double t) {
  if (recovery_.mode != RecoveryMode::kRestart || group_restart_at_ || !supervisor_.any_running()) return;
  const double last = store_.last_event_received();  // Unix seconds, 0 before any
  if (last <= 0 || last - t0_wall_ < attempt_started_s_) return;
  const double since = last - t0_wall_;
  const double limit = recovery_.hang_timeout.seconds();
  if (t - since < limit) return;
  begin_group_restart(fmt::format("no rank reported a step for {}", common::to_string(recovery_.hang_timeout)), t);
}

}  // namespace chaosbench::harness

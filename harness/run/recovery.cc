#include "harness/run/recovery.h"

#include <algorithm>
#include <csignal>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

namespace chaosbench::harness {
namespace {

// How long a rank stopped for a restart may take to finish its checkpoint and exit.
constexpr double kStopGraceS = 2.0;

}  // namespace

Recovery::Recovery(const RecoverySpec& spec, int nodes, RankTable& ranks, NodeSite& site, FaultDriver& faults,
                   Hooks hooks)
    : spec_(spec), nodes_(nodes), ranks_(ranks), site_(site), faults_(faults), hooks_(std::move(hooks)) {}

void Recovery::on_fault(const FaultEffect& effect) {
  const auto ended = ranks_.launches_of(effect.ended);
  if (effect.restart_at_s && !ended.empty()) {
    std::optional<std::size_t> repair;
    if (effect.repair_before_restart) repair = effect.occurrence;
    pending_.push_back({*effect.restart_at_s, ended, effect.fault, repair});
  } else if (effect.node_gone) {  // for good: a restart of every rank goes without it
    for (auto k : ended) nodes_down_.insert(ranks_.launches()[k].node);
  }
}

bool Recovery::pending_any(const std::function<bool(std::size_t)>& pred) const {
  for (const auto& p : pending_)
    for (auto idx : p.launches)
      if (pred(idx)) return true;
  return false;
}

void Recovery::tick(double t, std::optional<double> last_event_s) {
  restart_due(t);
  group_restart_due(t);
  check_hang(t, last_event_s);
}

void Recovery::restart_due(double t) {
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->at_s > t) {
      ++it;
      continue;
    }
    // A process started into a frozen node would freeze before exec, with the harness
    // waiting on it: a replacement comes up once its node is thawed. A rank a GPU fault
    // ends ends itself, when it next touches the device (or its watchdog fires): its
    // replacement waits for that.
    bool blocked = false;
    for (auto idx : it->launches)
      blocked = blocked || site_.frozen(ranks_.launches()[idx].node) || ranks_.running(idx);
    if (blocked) {
      ++it;
      continue;
    }
    if (it->repair) faults_.repair(*it->repair);
    hooks_.event("restart", {{"attempt", static_cast<std::int64_t>(attempt_)},
                             {"ranks", static_cast<std::int64_t>(it->launches.size())},
                             {"fault", it->fault}});
    for (auto idx : it->launches) {
      ranks_.count_restart(idx);
      hooks_.start_rank(idx);
      spdlog::info("rank {} restarted at {:.3f}s after {}", ranks_.launches()[idx].rank, hooks_.now(), it->fault);
    }
    it = pending_.erase(it);
  }
}

void Recovery::on_rank_failed(const std::string& reason) {
  // A killed node comes back when its fault said so: every rank restarts then, not
  // before (the first exit seen may be a peer's, failing because of the kill).
  double at = hooks_.now();
  absorb_pending(at);  // the restart of every rank replaces the fault's own
  begin_group_restart(reason, at);
}

// Pending restarts of single ranks become part of the restart of every rank: it waits
// for the latest of them, and repairs their faults first.
void Recovery::absorb_pending(double& at_s) {
  for (const auto& p : pending_) {
    at_s = std::max(at_s, p.at_s);
    if (p.repair) repairs_before_group_restart_.push_back(*p.repair);
  }
  pending_.clear();
}

void Recovery::begin_group_restart(const std::string& reason, double at_s) {
  if (attempt_ >= spec_.max_restarts) {
    hooks_.fail(fmt::format("{}, and recovery.max_restarts ({}) are used up", reason, spec_.max_restarts));
    return;
  }
  hooks_.event("failure_detected", {{"reason", reason}});
  const double now = hooks_.now();
  spdlog::warn("{}: stopping every rank; all restart {}", reason,
               at_s > now ? fmt::format("at {:.3f}s, when the node is back", at_s) : std::string("now"));
  // SIGTERM first, as torchrun: a rank finishes the checkpoint it is writing; one still
  // running after the grace period (stuck in a collective, or frozen) gets SIGKILL.
  for (std::size_t i = 0; i < ranks_.launches().size(); ++i) {
    if (!ranks_.running(i)) continue;
    ranks_.expect_exit(ranks_.pid(i));
    site_.signal(ranks_.pid(i), SIGTERM);
  }
  group_restart_at_ = at_s;
  group_kill_at_ = now + kStopGraceS;
}

void Recovery::group_restart_due(double t) {
  if (!group_restart_at_) return;
  // A node killed (with restart_after) while this restart was pending is waited for as
  // well: its own restart would otherwise start a second process for a rank.
  absorb_pending(*group_restart_at_);
  bool running = false;
  for (std::size_t i = 0; i < ranks_.launches().size(); ++i) {
    if (!ranks_.running(i)) continue;
    running = true;
    if (group_kill_at_ && t >= *group_kill_at_) site_.signal(ranks_.pid(i), SIGKILL);
  }
  if (group_kill_at_ && t >= *group_kill_at_) group_kill_at_.reset();
  if (running || *group_restart_at_ > t) return;  // every old rank is gone first
  std::vector<int> nodes;
  for (int n = 0; n < nodes_; ++n)
    if (!nodes_down_.count(n)) nodes.push_back(n);
  for (int n : nodes)
    if (site_.frozen(n)) return;  // a process started into a frozen node would hang: wait
  const int needed = spec_.min_nodes.value_or(nodes_);
  group_restart_at_.reset();
  if (static_cast<int>(nodes.size()) < needed) {
    hooks_.fail(fmt::format("cannot restart: {} of {} nodes are up and recovery.min_nodes is {}", nodes.size(), nodes_,
                            needed));
    return;
  }
  for (auto occurrence : repairs_before_group_restart_) faults_.repair(occurrence);
  repairs_before_group_restart_.clear();
  ++attempt_;
  hooks_.replan(nodes);
  hooks_.event("restart", {{"attempt", static_cast<std::int64_t>(attempt_)},
                           {"ranks", static_cast<std::int64_t>(ranks_.launches().size())}});
  spdlog::info("restart {}: {} ranks on nodes {}", attempt_, ranks_.launches().size(), fmt::join(nodes, ","));
  attempt_started_s_ = hooks_.now();
  for (std::size_t i = 0; i < ranks_.launches().size(); ++i) hooks_.start_rank(i);
}

// Armed once the current attempt has reported something (start-up, a rendezvous and a
// checkpoint restore take what they take; the scenario's timeout bounds those); any
// event counts as progress, so a long checkpoint save is not a hang.
void Recovery::check_hang(double t, std::optional<double> last_event_s) {
  if (spec_.mode != RecoveryMode::kRestart || group_restart_at_ || !site_.any_running()) return;
  if (!last_event_s || *last_event_s < attempt_started_s_) return;
  if (t - *last_event_s < spec_.hang_timeout.seconds()) return;
  begin_group_restart(fmt::format("no rank reported a step for {}", common::to_string(spec_.hang_timeout)), t);
}

}  // namespace chaosbench::harness

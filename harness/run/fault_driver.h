// The fault driver: the scenario's fault timeline acted out on a node site. It applies
// and reverts each occurrence when the schedule says so, keeps one FaultRecord per
// occurrence (targets, backend, apply latency, measured effect, errors), writes the
// timeline's fault events, and tells the run what an applied fault did that recovery
// must act on (processes it ended, a restart_after). It starts and stops no process and
// decides no recovery: those are the run's. Works on any NodeSite, so it is tested with
// a fake one (tests/harness/run_units_test.cc).
// Threads: the run's thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "faults/fault.h"
#include "faults/registry/registry.h"
#include "harness/plan/fault_schedule.h"
#include "harness/site/node_site.h"
#include "harness/collect/timeline_log.h"
#include "reports/model/run_model.h"

namespace chaosbench::harness {

// What an applied fault did that the run must act on.
struct FaultEffect {
  std::size_t occurrence = 0;
  std::string fault;                    // its name
  std::vector<pid_t> ended;             // processes it ended on purpose: their exit is no failure
  std::optional<double> restart_at_s;   // restart_after: when the ended ranks start again
  bool repair_before_restart = false;   // reversible (a GPU reset): reverted just before that
  bool node_gone = false;               // the ended processes' nodes are down for good
};

// An occurrence taking effect or ending, for those who follow the run live (the
// --metrics-listen state, --grafana annotations).
struct FaultTransition {
  std::size_t occurrence = 0;  // index in schedule().occurrences()
  std::size_t fault = 0;       // index in the scenario's faults
  bool active = false;         // true: applied; false: reverted
  double t_s = 0;              // when, in seconds since the workload started
  const reports::FaultRecord* record = nullptr;  // the occurrence's, targets resolved
};

class FaultDriver {
 public:
  using Now = std::function<double()>;                    // seconds since the workload started
  using OnError = std::function<void(const std::string&)>;  // a fault could not be applied or reverted
  using Ranks = std::function<std::vector<RankProcess>()>;  // the ranks as they run now
  // When step `n` was first reported, in seconds since the workload started; nullopt
  // when it has not been.
  using StepTime = std::function<std::optional<double>(std::int64_t n)>;

  // Borrows `faults` (the scenario's), `site` and `timeline`, which must outlive it.
  // `schedule`: the run's realised plan (schedule_plan.h); without it, the faults' own
  // (seed 42, no random target draws).
  FaultDriver(const std::vector<FaultSpec>& faults, NodeSite& site, TimelineLog& timeline, Now now, OnError on_error,
              std::optional<FaultSchedule> schedule = std::nullopt);

  // Called on the run's thread after each apply and revert that worked (after its
  // timeline event); it must not throw or block. One observer; a second replaces it.
  using Observer = std::function<void(const FaultTransition&)>;
  void set_observer(Observer observer) { observer_ = std::move(observer); }

  // Applies and reverts what is due at `t` given the highest step reported: reverts
  // first, then applies in due order. Returns the effects of what it applied.
  std::vector<FaultEffect> run_due(double t, std::int64_t max_step, const Ranks& ranks, const StepTime& step_time);
  // Applies occurrence `i` now; nullopt when it failed (on_error was called).
  std::optional<FaultEffect> apply(std::size_t i, const std::vector<RankProcess>& ranks,
                                   const StepTime& step_time = nullptr);
  // Reverts occurrence `i` now (an irreversible one is only marked done).
  void revert(std::size_t i);
  // Reverts occurrence `i` if it is in effect: the repair before a restart.
  void repair(std::size_t i);
  // Every active occurrence, newest first, so layered faults unwind as they were built.
  void revert_all();
  // Marks every pending occurrence skipped (never applied), with `why` in its record and
  // a fault_skipped event each: the system was not steady before the first fault.
  void skip_pending(const std::string& why);

  // Whether an occurrence of a fault with `trait` is in effect now.
  bool any_active(faults::FaultTrait trait) const;
  // The names of the faults in effect now, in schedule order; and whether any ended.
  std::vector<std::string> active_names() const;
  bool any_reverted() const;

  const FaultSchedule& schedule() const { return schedule_; }
  // One per occurrence, in schedule order.
  const std::vector<reports::FaultRecord>& records() const { return records_; }

 private:
  const std::vector<FaultSpec>& specs_;
  NodeSite& site_;
  TimelineLog& timeline_;
  Now now_;
  OnError on_error_;
  Observer observer_;
  FaultSchedule schedule_;
  std::vector<std::unique_ptr<faults::Fault>> faults_;  // by occurrence
  std::vector<reports::FaultRecord> records_;           // by occurrence
  double last_revert_s_ = 0;                            // when the last occurrence ended
};

}  // namespace chaosbench::harness

// The fault timeline: which occurrence of which fault is due to be applied or reverted,
// given the time since the workload started and the highest step reported. Pure logic
// (no clock, no faults), so every trigger rule is unit-tested without processes.
// Rules: an occurrence is due at its planned time (at, at + k*every, a random arrival;
// schedule_plan.h), when a rank first reports its step (`at_step`), or `delay` after the
// occurrence it follows was applied (`after`); an applied occurrence with a duration is
// due for revert at applied + duration. Reverts come before applies in one tick, so
// back-to-back windows of one fault never overlap. A due occurrence waits (keeping its
// place) while another occurrence of its fault is in effect, and while an exclusive fault
// is in effect or it is exclusive and another fault is: it is applied when that ends.
// Occurrences whose probability draw said no are not in the schedule at all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "harness/plan/schedule_plan.h"
#include "harness/scenario/scenario.h"

namespace chaosbench::harness {

// kSkipped: never applied because the system was not steady before the first fault
// (a `before` probe failed).
enum class OccurrenceState { kPending, kActive, kDone, kFailed, kSkipped };

struct Occurrence {
  std::size_t fault = 0;  // index into Scenario::faults
  int number = 1;         // 1-based among the fault's repeats
  std::optional<double> due_s;
  std::optional<std::int64_t> due_step;
  std::optional<double> duration_s;
  std::optional<std::size_t> after;  // index (in occurrences()) of the occurrence it follows
  double delay_s = 0;
  bool exclusive = false;
  std::optional<double> arrival_s;   // a random arrival's drawn time
  std::vector<int> nodes;            // a random target's draw for this occurrence; empty otherwise
  OccurrenceState state = OccurrenceState::kPending;
  std::optional<double> applied_s;
  std::optional<double> reverted_s;
};

struct ScheduledAction {
  enum Kind { kApply, kRevert } kind;
  std::size_t occurrence;  // index into FaultSchedule::occurrences()
};

class FaultSchedule {
 public:
  // The occurrences of `plan` that fire. The first form plans with seed 42, no node
  // draws and no horizon: for callers that have no cluster (tests, the aggregator's).
  explicit FaultSchedule(const std::vector<FaultSpec>& faults);
  FaultSchedule(const std::vector<FaultSpec>& faults, const std::vector<PlannedOccurrence>& plan);

  // What is due now, reverts first, then applies in due order.
  std::vector<ScheduledAction> due(double now_s, std::int64_t max_step) const;

  // The earliest time something is due (for sleeping), nullopt if only step triggers or
  // nothing remain. Occurrences that wait for another's end are left out: its revert is.
  std::optional<double> next_deadline() const;

  // State changes, recorded by the runner after acting.
  void mark_applied(std::size_t occurrence, double t_s);
  void mark_reverted(std::size_t occurrence, double t_s);
  void mark_failed(std::size_t occurrence);
  // Every pending occurrence will never be applied; returns them.
  std::vector<std::size_t> skip_pending();

  const std::vector<Occurrence>& occurrences() const { return occurrences_; }
  bool any_active() const;
  // Whether any occurrence was applied (active or done) so far.
  bool any_applied() const;
  // No occurrence is pending or active: the fault timeline is over.
  bool finished() const;
  // True while an at_step occurrence has not fired yet.
  bool waiting_for_step() const;

  // When occurrence i is due by its trigger alone; nullopt: not known (a step trigger,
  // or the occurrence it follows not applied yet).
  std::optional<double> trigger_time(std::size_t i) const;

 private:
  // A chained occurrence whose parent (or an ancestor) failed or was skipped: it can never come.
  bool orphaned(std::size_t i) const;
  // Whether i must wait because of the occurrences in effect (`active`, by index).
  bool must_wait(std::size_t i, const std::vector<std::size_t>& active) const;

  std::vector<Occurrence> occurrences_;
};

}  // namespace chaosbench::harness

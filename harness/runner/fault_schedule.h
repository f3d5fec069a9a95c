// The fault timeline: which occurrence of which fault is due to be applied or reverted,
// given the time since the workload started and the highest step reported. Pure logic
// (no clock, no faults), so every trigger rule is unit-tested without processes.
// Rules: `at` occurrences are due at at + k*every (k < count); `at_step` ones when a rank
// first reports that step; an applied occurrence with a duration is due for revert at
// applied + duration. Reverts come before applies in one tick, so back-to-back windows
// of one fault never overlap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

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
  explicit FaultSchedule(const std::vector<FaultSpec>& faults);

  // What is due now, reverts first, then applies in due order.
  std::vector<ScheduledAction> due(double now_s, std::int64_t max_step) const;

  // The earliest future time something is due (for sleeping), nullopt if only step
  // triggers or nothing remain.
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

 private:
  std::vector<Occurrence> occurrences_;
};

}  // namespace chaosbench::harness

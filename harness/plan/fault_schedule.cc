#include "harness/plan/fault_schedule.h"

#include <algorithm>

namespace chaosbench::harness {

FaultSchedule::FaultSchedule(const std::vector<FaultSpec>& faults)
    : FaultSchedule(faults, plan_schedule(faults, 0, 42, 1e12)) {}

FaultSchedule::FaultSchedule(const std::vector<FaultSpec>& faults, const std::vector<PlannedOccurrence>& plan) {
  std::vector<std::optional<std::size_t>> index(plan.size());  // plan index -> occurrence index
  for (std::size_t p = 0; p < plan.size(); ++p) {
    const auto& po = plan[p];
    if (!po.fires) continue;
    Occurrence o;
    o.fault = po.fault;
    o.number = po.number;
    o.due_s = po.due_s;
    o.due_step = po.due_step;
    o.duration_s = po.duration_s;
    o.delay_s = po.delay_s;
    o.exclusive = faults[po.fault].exclusive;
    o.arrival_s = po.arrival_s;
    o.nodes = po.nodes;
    index[p] = occurrences_.size();
    occurrences_.push_back(std::move(o));
  }
  // Links last: a chained fault may come before the one it follows.
  for (std::size_t p = 0; p < plan.size(); ++p)
    if (index[p] && plan[p].after) occurrences_[*index[p]].after = index[*plan[p].after];  // fires when its child does
}

std::optional<double> FaultSchedule::trigger_time(std::size_t i) const {
  const auto& o = occurrences_[i];
  if (o.due_s) return o.due_s;
  if (o.after && occurrences_[*o.after].applied_s) return *occurrences_[*o.after].applied_s + o.delay_s;
  return std::nullopt;
}

bool FaultSchedule::must_wait(std::size_t i, const std::vector<std::size_t>& active) const {
  const auto& o = occurrences_[i];
  return std::any_of(active.begin(), active.end(), [&](std::size_t a) {
    const auto& other = occurrences_[a];
    return other.fault == o.fault || (o.exclusive || other.exclusive);
  });
}

std::vector<ScheduledAction> FaultSchedule::due(double now_s, std::int64_t max_step) const {
  std::vector<ScheduledAction> out;
  std::vector<std::size_t> active;  // in effect after this tick's reverts
  for (std::size_t i = 0; i < occurrences_.size(); ++i) {
    const auto& o = occurrences_[i];
    if (o.state != OccurrenceState::kActive) continue;
    if (o.duration_s && o.applied_s && now_s >= *o.applied_s + *o.duration_s)
      out.push_back({ScheduledAction::kRevert, i});
    else
      active.push_back(i);
  }
  std::vector<std::pair<double, std::size_t>> candidates;  // (trigger time, index)
  std::optional<std::size_t> last_fault;
  for (std::size_t i = 0; i < occurrences_.size(); ++i) {
    const auto& o = occurrences_[i];
    if (o.state != OccurrenceState::kPending || orphaned(i)) continue;
    // A fault's occurrences come in order: only its first pending one can be next (so a
    // soak of thousands costs one candidate per fault, not one per occurrence).
    if (last_fault == o.fault) continue;
    last_fault = o.fault;
    auto when = trigger_time(i);
    if (when && now_s >= *when) candidates.emplace_back(*when, i);
    else if (!when && o.due_step && max_step >= *o.due_step) candidates.emplace_back(now_s, i);
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [when, i] : candidates) {
    if (must_wait(i, active)) continue;
    out.push_back({ScheduledAction::kApply, i});
    active.push_back(i);  // what starts in this tick counts for the next candidates
  }
  return out;
}

std::optional<double> FaultSchedule::next_deadline() const {
  std::optional<double> best;
  auto consider = [&](double t) {
    if (!best || t < *best) best = t;
  };
  std::vector<std::size_t> active;
  for (std::size_t i = 0; i < occurrences_.size(); ++i) {
    const auto& o = occurrences_[i];
    if (o.state != OccurrenceState::kActive) continue;
    active.push_back(i);
    if (o.duration_s && o.applied_s) consider(*o.applied_s + *o.duration_s);
  }
  std::optional<std::size_t> last_fault;
  for (std::size_t i = 0; i < occurrences_.size(); ++i) {
    if (occurrences_[i].state != OccurrenceState::kPending || orphaned(i) || last_fault == occurrences_[i].fault)
      continue;
    last_fault = occurrences_[i].fault;  // only a fault's first pending occurrence can be next
    auto when = trigger_time(i);
    if (when && !must_wait(i, active)) consider(*when);
  }
  return best;
}

void FaultSchedule::mark_applied(std::size_t i, double t_s) {
  occurrences_[i].state = OccurrenceState::kActive;
  occurrences_[i].applied_s = t_s;
}

void FaultSchedule::mark_reverted(std::size_t i, double t_s) {
  occurrences_[i].state = OccurrenceState::kDone;
  occurrences_[i].reverted_s = t_s;
}

void FaultSchedule::mark_failed(std::size_t i) { occurrences_[i].state = OccurrenceState::kFailed; }

bool FaultSchedule::any_active() const {
  return std::any_of(occurrences_.begin(), occurrences_.end(),
                     [](const auto& o) { return o.state == OccurrenceState::kActive; });
}

}  // namespace chaosbench::harness

namespace chaosbench::harness {

bool FaultSchedule::waiting_for_step() const {
  return std::any_of(occurrences_.begin(), occurrences_.end(), [](const auto& o) {
    return o.state == OccurrenceState::kPending && o.due_step.has_value();
  });
}

std::vector<std::size_t> FaultSchedule::skip_pending() {
  std::vector<std::size_t> skipped;
  for (std::size_t i = 0; i < occurrences_.size(); ++i) {
    if (occurrences_[i].state != OccurrenceState::kPending) continue;
    occurrences_[i].state = OccurrenceState::kSkipped;
    skipped.push_back(i);
  }
  return skipped;
}

bool FaultSchedule::any_applied() const {
  return std::any_of(occurrences_.begin(), occurrences_.end(), [](const Occurrence& o) { return o.applied_s.has_value(); });
}

bool FaultSchedule::orphaned(std::size_t i) const {
  // Up the chain (a parent may sit before or after its child; the hops are bounded).
  for (std::size_t hops = 0; hops <= occurrences_.size() && occurrences_[i].after; ++hops) {
    const std::size_t p = *occurrences_[i].after;
    const auto state = occurrences_[p].state;
    if (state == OccurrenceState::kFailed || state == OccurrenceState::kSkipped) return true;
    if (state != OccurrenceState::kPending) return false;
    i = p;
  }
  return false;
}

bool FaultSchedule::finished() const {
  for (std::size_t i = 0; i < occurrences_.size(); ++i) {
    const auto state = occurrences_[i].state;
    if (state == OccurrenceState::kActive || (state == OccurrenceState::kPending && !orphaned(i))) return false;
  }
  return true;
}

}  // namespace chaosbench::harness

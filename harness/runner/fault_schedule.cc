#include "harness/runner/fault_schedule.h"

#include <algorithm>

namespace chaosbench::harness {

FaultSchedule::FaultSchedule(const std::vector<FaultSpec>& faults) {
  for (std::size_t i = 0; i < faults.size(); ++i) {
    const auto& f = faults[i];
    std::optional<double> duration;
    if (f.duration) duration = f.duration->seconds();
    int count = f.repeat ? f.repeat->count : 1;
    for (int k = 0; k < count; ++k) {
      Occurrence o;
      o.fault = i;
      o.number = k + 1;
      o.duration_s = duration;
      if (f.at) o.due_s = f.at->seconds() + (f.repeat ? k * f.repeat->every.seconds() : 0.0);
      if (f.at_step) o.due_step = *f.at_step;
      occurrences_.push_back(o);
    }
  }
}

std::vector<ScheduledAction> FaultSchedule::due(double now_s, std::int64_t max_step) const {
  std::vector<ScheduledAction> reverts, applies;
  for (std::size_t i = 0; i < occurrences_.size(); ++i) {
    const auto& o = occurrences_[i];
    if (o.state == OccurrenceState::kActive && o.duration_s && o.applied_s &&
        now_s >= *o.applied_s + *o.duration_s)
      reverts.push_back({ScheduledAction::kRevert, i});
    if (o.state != OccurrenceState::kPending) continue;
    // One occurrence of a fault at a time: a repeat waits for the previous one's revert.
    bool previous_active = i > 0 && occurrences_[i - 1].fault == o.fault &&
                           occurrences_[i - 1].state == OccurrenceState::kActive &&
                           std::find_if(reverts.begin(), reverts.end(),
                                        [&](const auto& a) { return a.occurrence == i - 1; }) == reverts.end();
    if (previous_active) continue;
    if ((o.due_s && now_s >= *o.due_s) || (o.due_step && max_step >= *o.due_step))
      applies.push_back({ScheduledAction::kApply, i});
  }
  std::stable_sort(applies.begin(), applies.end(), [&](const auto& a, const auto& b) {
    return occurrences_[a.occurrence].due_s.value_or(0) < occurrences_[b.occurrence].due_s.value_or(0);
  });
  reverts.insert(reverts.end(), applies.begin(), applies.end());
  return reverts;
}

std::optional<double> FaultSchedule::next_deadline() const {
  std::optional<double> best;
  auto consider = [&](double t) {
    if (!best || t < *best) best = t;
  };
  for (const auto& o : occurrences_) {
    if (o.state == OccurrenceState::kPending && o.due_s) consider(*o.due_s);
    if (o.state == OccurrenceState::kActive && o.duration_s && o.applied_s) consider(*o.applied_s + *o.duration_s);
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

bool FaultSchedule::finished() const {
  return std::none_of(occurrences_.begin(), occurrences_.end(), [](const Occurrence& o) {
    return o.state == OccurrenceState::kPending || o.state == OccurrenceState::kActive;
  });
}

}  // namespace chaosbench::harness

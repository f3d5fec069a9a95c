#include "harness/run/fault_driver.h"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

namespace chaosbench::harness {
namespace {
using TL = TimelineLog;
}  // namespace

FaultDriver::FaultDriver(const std::vector<FaultSpec>& faults, NodeSite& site, TimelineLog& timeline, Now now,
                         OnError on_error, std::optional<FaultSchedule> schedule)
    : specs_(faults), site_(site), timeline_(timeline), now_(std::move(now)), on_error_(std::move(on_error)),
      schedule_(schedule ? std::move(*schedule) : FaultSchedule(faults)) {
  faults_.resize(schedule_.occurrences().size());
  for (const auto& o : schedule_.occurrences()) {
    const auto& spec = specs_[o.fault];
    reports::FaultRecord rec;
    rec.name = spec.name;
    rec.type = spec.type;
    rec.occurrence = o.number;
    rec.reversible = faults::find_fault_type(spec.type)->reversible;
    records_.push_back(rec);
  }
}

std::vector<FaultEffect> FaultDriver::run_due(double t, std::int64_t max_step, const Ranks& ranks,
                                              const StepTime& step_time) {
  std::vector<FaultEffect> effects;
  for (const auto& action : schedule_.due(t, max_step)) {
    if (action.kind == ScheduledAction::kRevert) {
      revert(action.occurrence);
    } else if (auto effect = apply(action.occurrence, ranks(), step_time)) {
      effects.push_back(std::move(*effect));
    }
  }
  return effects;
}

std::optional<FaultEffect> FaultDriver::apply(std::size_t i, const std::vector<RankProcess>& ranks,
                                              const StepTime& step_time) {
  const auto& o = schedule_.occurrences()[i];
  const auto& spec = specs_[o.fault];
  auto& rec = records_[i];
  // An occurrence that waited for another's end is late from that end, not its trigger.
  double scheduled = std::max(schedule_.trigger_time(i).value_or(now_()), last_revert_s_);
  // A random target drawn for this occurrence (schedule_plan.h) is applied as those nodes.
  FaultSpec drawn;
  if (!o.nodes.empty()) {
    drawn = spec;
    drawn.target = TargetSpec{};
    drawn.target.form = faults::TargetForm::kNodes;
    drawn.target.indices = o.nodes;
  }
  try {
    faults_[i] = site_.apply_fault(o.nodes.empty() ? spec : drawn, o.fault, ranks, &rec.targets);
  } catch (const std::exception& e) {
    schedule_.mark_failed(i);
    rec.error = e.what();
    timeline_.write(now_(), "fault_failed", {{"fault", TL::str(spec.name)}, {"error", TL::str(e.what())}});
    on_error_(fmt::format("fault {} ({}) could not be applied: {}", spec.name, spec.type, e.what()));
    return std::nullopt;
  }
  const double t = now_();
  const auto& fault = *faults_[i];
  FaultEffect effect;
  effect.occurrence = i;
  effect.fault = spec.name;
  effect.ended = fault.ended_processes();
  if (spec.restart_after) {
    effect.restart_at_s = t + spec.restart_after->seconds();
    effect.repair_before_restart = fault.reversible();
  } else {
    effect.node_gone = faults::fault_has_trait(spec.type, faults::kNodeGone);  // recovery restarts without it
  }
  schedule_.mark_applied(i, t);
  rec.applied_at_s = t;
  rec.backend = fault.backend();
  // Scheduled time to in effect: the harness's own timing precision. For a step trigger
  // the schedule is the arrival of the step event that reached it.
  if (o.due_step) {
    auto reached = step_time ? step_time(*o.due_step) : std::nullopt;
    scheduled = reached.value_or(t);
  }
  rec.apply_latency_us = std::max(0.0, (t - scheduled) * 1e6);
  timeline_.write(t, "fault_applied", {{"fault", TL::str(spec.name)}, {"type", TL::str(spec.type)},
                                       {"occurrence", TL::num(o.number)}, {"backend", TL::str(rec.backend)},
                                       {"apply_latency_us", TL::num(*rec.apply_latency_us)}});
  spdlog::info("fault {} ({}) applied at {:.3f}s on {}", spec.name, spec.type, t, fmt::join(rec.targets, ", "));
  if (observer_) observer_({i, o.fault, true, t, &rec});
  return effect;
}

void FaultDriver::revert(std::size_t i) {
  const auto& o = schedule_.occurrences()[i];
  const auto& spec = specs_[o.fault];
  auto& rec = records_[i];
  try {
    if (faults_[i] && faults_[i]->reversible()) faults_[i]->revert();
    const double t = now_();
    if (faults_[i]) rec.effect = faults_[i]->effect();
    schedule_.mark_reverted(i, t);
    last_revert_s_ = t;
    rec.reverted_at_s = t;
    timeline_.write(t, "fault_reverted", {{"fault", TL::str(spec.name)}, {"occurrence", TL::num(o.number)}});
    spdlog::info("fault {} reverted at {:.3f}s", spec.name, t);
    if (observer_) observer_({i, o.fault, false, t, &rec});
  } catch (const std::exception& e) {
    schedule_.mark_failed(i);
    rec.error = fmt::format("revert failed: {}", e.what());
    timeline_.write(now_(), "fault_revert_failed", {{"fault", TL::str(spec.name)}, {"error", TL::str(e.what())}});
    on_error_(fmt::format("fault {} could not be reverted: {}", spec.name, e.what()));
  }
}

void FaultDriver::repair(std::size_t i) {
  if (faults_[i] && faults_[i]->applied()) revert(i);
}

void FaultDriver::revert_all() {
  std::vector<std::size_t> active;
  for (std::size_t i = 0; i < schedule_.occurrences().size(); ++i)
    if (schedule_.occurrences()[i].state == OccurrenceState::kActive) active.push_back(i);
  std::sort(active.begin(), active.end(), [&](auto a, auto b) {
    return schedule_.occurrences()[a].applied_s > schedule_.occurrences()[b].applied_s;
  });
  for (auto i : active) revert(i);
}

void FaultDriver::skip_pending(const std::string& why) {
  for (std::size_t i : schedule_.skip_pending()) {
    records_[i].error = "skipped: " + why;
    timeline_.write(now_(), "fault_skipped", {{"fault", TL::str(specs_[schedule_.occurrences()[i].fault].name)},
                                              {"occurrence", TL::num(schedule_.occurrences()[i].number)},
                                              {"reason", TL::str(why)}});
  }
}

bool FaultDriver::any_active(faults::FaultTrait trait) const {
  for (const auto& o : schedule_.occurrences())
    if (o.state == OccurrenceState::kActive && faults::fault_has_trait(specs_[o.fault].type, trait)) return true;
  return false;
}

std::vector<std::string> FaultDriver::active_names() const {
  std::vector<std::string> names;
  for (const auto& o : schedule_.occurrences())
    if (o.state == OccurrenceState::kActive) names.push_back(specs_[o.fault].name);
  return names;
}

bool FaultDriver::any_reverted() const {
  for (const auto& o : schedule_.occurrences())
    if (o.state == OccurrenceState::kDone) return true;
  return false;
}

}  // namespace chaosbench::harness

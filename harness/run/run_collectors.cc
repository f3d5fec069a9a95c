// The run's collectors (run_collector.h) and what the run's thread asks of them: the
// stages, the fault timeline, whether the system is steady before the first fault, and
// whether to stop now (a stop condition, the kill switch). See run.h.
#include <algorithm>
#include <fmt/format.h>

#include "harness/run/diagnosis_collector.h"
#include "harness/run/grafana_collector.h"
#include "harness/run/kill_switch_collector.h"
#include "harness/run/listener_collector.h"
#include "harness/run/probe_collector.h"
#include "harness/run/run.h"
#include "harness/run/scrape_collector.h"
#include "harness/run/telemetry_collector.h"

namespace chaosbench::harness {
namespace {

using TL = TimelineLog;

}  // namespace

// The list's order is the order they start in (each stage) and the reverse of the order
// they stop in: the probes stop first (the workload's end is no probe failure), the
// telemetry after the diagnosis that reads it; the listener and Grafana stop last.
void Run::make_collectors() {
  ctx_.now_s = [this] { return now_s(); };
  ctx_.take_record = [this](const bench::Record& r, double received) { take_record(r, received); };
  ctx_.harness_event = [this](const std::string& name, bench::Labels fields) { harness_event(name, std::move(fields)); };
  auto telemetry = std::make_unique<TelemetryCollector>();
  auto diagnosis = std::make_unique<DiagnosisCollector>(*telemetry);
  collectors_.push_back(std::make_unique<ListenerCollector>());
  collectors_.push_back(std::make_unique<GrafanaCollector>());
  collectors_.push_back(std::move(telemetry));
  collectors_.push_back(std::make_unique<ScrapeCollector>());
  collectors_.push_back(std::move(diagnosis));
  collectors_.push_back(std::make_unique<KillSwitchCollector>());
  collectors_.push_back(std::make_unique<ProbeCollector>());
}

void Run::collectors_at(RunCollector::Stage stage) {
  ctx_.env = env_.get();
  ctx_.launches = ranks_ ? &ranks_->launches() : nullptr;
  for (auto& c : collectors_) c->at(stage, ctx_);
}

// In the unwind: the others after the faults were reverted (last = false), those that
// stop last at its very end (last = true); in the reverse order of the list.
void Run::stop_collectors(bool last) {
  for (auto it = collectors_.rbegin(); it != collectors_.rend(); ++it)
    if ((*it)->stops_last() == last) (*it)->stop();
}

// Called when an apply is due and none has happened yet: asks the collectors (the
// `before` probes) once. When the system is not steady, every fault is skipped and the
// run fails, but goes on without faults (its numbers are still a baseline).
bool Run::steady_before_first_fault(double t) {
  if (steady_checked_ || faults_->schedule().any_applied()) return true;
  const auto due = faults_->schedule().due(t, store_.max_step());
  if (std::none_of(due.begin(), due.end(), [](const auto& a) { return a.kind == ScheduledAction::kApply; }))
    return true;
  steady_checked_ = true;
  std::string why;
  bool steady = true;
  for (auto& c : collectors_) {
    std::string own;
    if (!c->before_first_fault(&own) && steady) {
      steady = false;
      why = own;
    }
  }
  if (steady) return true;
  faults_->skip_pending(why);
  verdict_.not_steady(fmt::format("the system was not steady before the first fault, so no fault was applied: {}", why));
  return false;
}

// After each tick of the fault driver: whether the timeline is over (for `after` probes;
// which faults are in effect reaches them through on_fault_transition).
void Run::tell_faults_finished() {
  if (told_faults_finished_ || !faults_->schedule().finished()) return;
  told_faults_finished_ = true;
  for (auto& c : collectors_) c->faults_finished();
}

// A decided stop condition, or the kill switch (the first collector that says so): records
// the abort, which the unwind then carries out (every fault reverted first). True when
// the run is to stop now.
bool Run::abort_requested(double t) {
  std::optional<AbortDecision> d;
  for (auto& c : collectors_)
    if (!d) d = c->abort_decision();
  if (!d) return false;
  abort_ = reports::AbortRecord{d->cause, d->evidence, d->decided_s, std::nullopt};
  const std::string reason = d->cause == "kill switch" ? fmt::format("kill switch: {}", d->evidence)
                                                       : fmt::format("stop condition: {} {}", d->cause, d->evidence);
  verdict_.abort(reason);
  live_.aborted(reason);
  env_->timeline().write(d->decided_s, "abort",
                         {{"cause", TL::str(d->cause)}, {"evidence", TL::str(d->evidence)}, {"noticed", TL::num(t)}});
  return true;
}

// In the unwind, right after every fault was reverted: fault/abort_latency's end.
void Run::note_abort_reverted() {
  if (!abort_) return;
  abort_->reverted_s = now_s();
  env_->timeline().write(*abort_->reverted_s, "abort_faults_reverted",
                         {{"latency_ms", TL::num((*abort_->reverted_s - abort_->decided_s) * 1000.0)}});
  for (auto& c : collectors_) c->abort_carried_out();
}

// The fault driver's observer (run's thread): each applied or reverted occurrence reaches
// the live state and the collectors (Grafana, the `during` probes).
void Run::on_fault_transition(const FaultTransition& t) {
  if (t.active) live_.fault_applied(t.fault, t.record->targets);
  else live_.fault_reverted(t.fault);
  for (auto& c : collectors_) c->on_fault(t);
}

}  // namespace chaosbench::harness

// The run's steps for live probes, the stop condition and the kill switch (see run.h and
// probe_engine.h): the probes see the fault timeline as the run's thread acts it out, the
// run asks them whether the system is steady before the first fault, and stops itself
// when a stop condition is decided or the kill switch is pulled.
#include <algorithm>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "harness/run/run.h"

namespace chaosbench::harness {
namespace {

using TL = TimelineLog;

}  // namespace

// After bring-up: every probe's check is made now, so a probe that cannot be made fails
// the run before the workload starts. The threads start with the workload.
void Run::make_probes() {
  kill_switch_ = std::make_unique<KillSwitch>(env_->out(), began_wall_);
  if (scenario_.probes.empty()) return;
  for (const auto& p : scenario_.probes) live_.declare_probe(p.name);
  probes::ProbeContext ctx;
  ctx.store = &store_;
  NodeSite* site = &env_->site();
  ctx.netns_fd = [site](int node) { return site->netns_fd(node); };
  ctx.address = [site](int node) { return site->address(node); };
  ProbeEngine::Hooks hooks;
  hooks.now_s = [this] { return now_s(); };
  hooks.now_wall = [] { return bench::wall_time_now(); };
  hooks.on_result = [this](const ProbeSpec& spec, const reports::ProbeTransition& r, bool changed) {
    probe_result(spec, r, changed);
  };
  probes_ = std::make_unique<ProbeEngine>(
      scenario_.probes, scenario_.abort, [ctx](const ProbeSpec& spec) { return probes::make_probe_check(spec, ctx); },
      std::move(hooks));
}

// On a probe thread: the timeline shows each change of a probe's outcome.
void Run::probe_result(const ProbeSpec& spec, const reports::ProbeTransition& r, bool changed) {
  live_.probe_result(spec.name, r.ok, r.value, r.t);
  if (!changed) return;
  std::vector<TimelineField> fields{{"probe", TL::str(spec.name)}, {"evidence", TL::str(r.evidence)}};
  if (r.value) fields.emplace_back("value", TL::num(*r.value));
  env_->timeline().write(r.t, r.ok ? "probe_passed" : "probe_failed", fields);
}

// Called when an apply is due and none has happened yet: asks the `before` probes once.
// When the system is not steady, every fault is skipped and the run fails, but goes on
// without faults (its numbers are still a baseline).
bool Run::steady_before_first_fault(double t) {
  if (steady_checked_ || !probes_ || faults_->schedule().any_applied()) return true;
  const auto due = faults_->schedule().due(t, store_.max_step());
  if (std::none_of(due.begin(), due.end(), [](const auto& a) { return a.kind == ScheduledAction::kApply; }))
    return true;
  steady_checked_ = true;
  std::string why;
  const bool steady = probes_->steady_state(&why);
  probes_->faults_started();
  if (steady) return true;
  faults_->skip_pending(why);
  verdict_.not_steady(fmt::format("the system was not steady before the first fault, so no fault was applied: {}", why));
  return false;
}

// After each tick of the fault driver: whether the timeline is over (for `after` probes;
// which faults are in effect reaches them through the driver's observer,
// on_fault_transition).
void Run::tell_probes_fault_state() {
  if (!probes_ || told_faults_finished_ || !faults_->schedule().finished()) return;
  told_faults_finished_ = true;
  probes_->faults_finished();
}

// A decided stop condition, or the kill switch: records the abort, which the unwind
// then carries out (every fault reverted first). True when the run is to stop now.
bool Run::abort_requested(double t) {
  std::optional<AbortDecision> d;
  if (probes_ && probes_->abort_decided()) d = probes_->abort_decision();
  if (!d && kill_switch_ && kill_switch_->pulled()) d = AbortDecision{"kill switch", kill_switch_->reason(), t};
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
  if (kill_switch_) kill_switch_->reset();
}

}  // namespace chaosbench::harness

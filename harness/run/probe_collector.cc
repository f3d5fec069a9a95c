#include "harness/run/probe_collector.h"

#include "harness/run/run_environment.h"

namespace chaosbench::harness {
namespace {

using TL = TimelineLog;

}  // namespace

void ProbeCollector::at(Stage stage, const RunContext& ctx) {
  if (stage == Stage::kBringUp) make(ctx);
  if (stage == Stage::kRanksStarted && engine_) engine_->start();
}

// Every probe's check is made now, so a probe that cannot be made fails the run before
// the workload starts.
void ProbeCollector::make(const RunContext& ctx) {
  ctx_ = &ctx;
  if (ctx.scenario.probes.empty()) return;
  for (const auto& p : ctx.scenario.probes) ctx.live.declare_probe(p.name);
  probes::ProbeContext pctx;
  pctx.store = &ctx.store;
  NodeSite* site = &ctx.env->site();
  pctx.netns_fd = [site](int node) { return site->netns_fd(node); };
  pctx.address = [site](int node) { return site->address(node); };
  ProbeEngine::Hooks hooks;
  hooks.now_s = ctx.now_s;
  hooks.now_wall = [] { return bench::wall_time_now(); };
  hooks.on_result = [this](const ProbeSpec& spec, const reports::ProbeTransition& r, bool changed) {
    result(spec, r, changed);
  };
  engine_ = std::make_unique<ProbeEngine>(
      ctx.scenario.probes, ctx.scenario.abort,
      [pctx](const ProbeSpec& spec) { return probes::make_probe_check(spec, pctx); }, std::move(hooks));
}

// On a probe thread: the live state and, for each change of a probe's outcome, the timeline.
void ProbeCollector::result(const ProbeSpec& spec, const reports::ProbeTransition& r, bool changed) const {
  ctx_->live.probe_result(spec.name, r.ok, r.value, r.t);
  if (!changed) return;
  std::vector<TimelineField> fields{{"probe", TL::str(spec.name)}, {"evidence", TL::str(r.evidence)}};
  if (r.value) fields.emplace_back("value", TL::num(*r.value));
  ctx_->env->timeline().write(r.t, r.ok ? "probe_passed" : "probe_failed", fields);
}

void ProbeCollector::stop() {
  if (engine_) engine_->stop();
}

// The `during` probes.
void ProbeCollector::on_fault(const FaultTransition& t) {
  if (engine_) engine_->fault_active(ctx_->scenario.faults[t.fault].name, t.active);
}

// The `before` probes are asked once; then they end.
bool ProbeCollector::before_first_fault(std::string* why) {
  if (!engine_) return true;
  const bool steady = engine_->steady_state(why);
  engine_->faults_started();
  return steady;
}

// The `after` probes begin.
void ProbeCollector::faults_finished() {
  if (engine_) engine_->faults_finished();
}

std::optional<AbortDecision> ProbeCollector::abort_decision() {
  if (!engine_ || !engine_->abort_decided()) return std::nullopt;
  return engine_->abort_decision();
}

void ProbeCollector::add_to(ResultInputs& in) const {
  if (engine_) in.probes = engine_->records();
}

}  // namespace chaosbench::harness

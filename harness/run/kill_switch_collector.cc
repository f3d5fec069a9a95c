#include "harness/run/kill_switch_collector.h"

#include "harness/run/run_environment.h"

namespace chaosbench::harness {

void KillSwitchCollector::at(Stage stage, const RunContext& ctx) {
  if (stage != Stage::kBringUp) return;
  ctx_ = &ctx;
  switch_ = std::make_unique<KillSwitch>(ctx.env->out(), ctx.began_wall);
}

std::optional<AbortDecision> KillSwitchCollector::abort_decision() {
  if (!switch_ || !switch_->pulled()) return std::nullopt;
  return AbortDecision{"kill switch", switch_->reason(), ctx_->now_s()};
}

void KillSwitchCollector::abort_carried_out() {
  if (switch_) switch_->reset();
}

}  // namespace chaosbench::harness

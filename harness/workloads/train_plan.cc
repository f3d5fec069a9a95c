// `train`: every node's ranks run `worker train` on the run's store, checkpoints under the
// run's directory unless the scenario says where.
#include "bench/common/flag_values.h"
#include "bench/train/train_settings.h"
#include "faults/registry/registry.h"
#include "harness/workloads/train_description.h"
#include "harness/workloads/workload_kinds.h"

namespace chaosbench::harness {
namespace {

class TrainPlan final : public WorkloadPlan {
 public:
  explicit TrainPlan(const Scenario& s) : scenario_(s), w_(std::get<TrainWorkload>(s.workload)) {}

  RankCommand command(const RankPlace& at, const LaunchContext& ctx) const override {
    TrainWorkload settings = w_;
    auto& dir = settings.checkpoint.dir;
    if (dir.empty()) dir = ctx.run_dir + "/checkpoints";
    else dir = ctx.scenario_relative(dir);
    if (!settings.sdc_check_every) settings.sdc_check_every = has_fault_with(scenario_, faults::kSilentCorruption) ? 1 : 0;
    RankCommand c;
    c.argv = {ctx.self_exe, "worker", "train"};
    for (auto& flag : bench::train::encode_train_settings(settings)) c.argv.push_back(std::move(flag));
    c.argv.insert(c.argv.end(), {"--seed", std::to_string(ctx.seed), "--store", ctx.store_for(at.node), "--prefix",
                                 ctx.run_id, "--host", at.address});
    // With recovery and a hang to expect, a step that hangs past recovery.hang_timeout
    // ends the rank (its watchdog), so a GPU or collective hang becomes a failure recovery
    // acts on. Not otherwise: a rank paused (node.pause) past it would end on thawing.
    if (w_.recovery.mode != RecoveryMode::kNone && has_fault_with(scenario_, faults::kHangs))
      c.argv.insert(c.argv.end(), {"--watchdog-ms", bench::ms_flag(w_.recovery.hang_timeout)});
    return c;
  }
  std::int64_t planned_steps() const override { return w_.steps; }
  // The device and the gradient reducer, for as many ranks as trained together.
  std::map<std::string, std::string> backends(std::int64_t world) const override {
    return {{"train", describe_train_run(w_, world)}};
  }
  std::optional<double> target_loss() const override { return w_.target_loss; }

 private:
  const Scenario& scenario_;
  const TrainWorkload& w_;
};

}  // namespace

std::unique_ptr<WorkloadPlan> make_train_plan(const Scenario& scenario) { return std::make_unique<TrainPlan>(scenario); }

}  // namespace chaosbench::harness

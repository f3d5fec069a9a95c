// `collective`: every node's ranks run `worker collective`, meeting in the run's store.
#include "bench/collective/collective_settings.h"
#include "harness/workloads/workload_kinds.h"

namespace chaosbench::harness {
namespace {

class CollectivePlan final : public WorkloadPlan {
 public:
  explicit CollectivePlan(const CollectiveWorkload& w) : w_(w) {}

  RankCommand command(const RankPlace& at, const LaunchContext& ctx) const override {
    RankCommand c;
    c.argv = {ctx.self_exe, "worker", "collective"};
    for (auto& flag : bench::encode_collective_settings(w_)) c.argv.push_back(std::move(flag));
    c.argv.insert(c.argv.end(), {"--store", ctx.store_for(at.node), "--prefix", ctx.run_id, "--host", at.address});
    return c;
  }
  std::optional<double> planned_seconds() const override {
    if (w_.duration.value.count() > 0) return w_.duration.seconds();
    return std::nullopt;
  }
  bool uses_blas() const override { return false; }
  std::map<std::string, std::string> backends(std::int64_t) const override {
    return {{"collective", "gloo/tcp"}};
  }

 private:
  const CollectiveWorkload& w_;
};

}  // namespace

std::unique_ptr<WorkloadPlan> make_collective_plan(const Scenario& scenario) {
  return std::make_unique<CollectivePlan>(std::get<CollectiveWorkload>(scenario.workload));
}

}  // namespace chaosbench::harness

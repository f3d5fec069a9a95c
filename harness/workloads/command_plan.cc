// `command`: any program on every node or some, its argv, env and cwd with the
// placeholders expanded per rank; GPU faults reach it through the CUDA interposer.
#include "harness/scenario/placeholders.h"
#include "harness/workloads/workload_kinds.h"

namespace chaosbench::harness {
namespace {

class CommandPlan final : public WorkloadPlan {
 public:
  explicit CommandPlan(const CommandWorkload& w) : w_(w) {}

  std::vector<int> nodes(const ClusterSpec& cluster) const override {
    return w_.nodes.empty() ? WorkloadPlan::nodes(cluster) : w_.nodes;
  }
  RankCommand command(const RankPlace& at, const LaunchContext& /*ctx*/) const override {
    RankCommand c;
    for (const auto& a : w_.argv) c.argv.push_back(expand_placeholders(a, at.placeholder));
    for (const auto& [k, v] : w_.env) c.env[k] = expand_placeholders(v, at.placeholder);
    if (!w_.cwd.empty()) c.cwd = expand_placeholders(w_.cwd, at.placeholder);
    return c;
  }
  std::optional<std::string> scenario_blas_coretype() const override {
    if (auto it = w_.env.find("OPENBLAS_CORETYPE"); it != w_.env.end()) return it->second;
    return std::nullopt;
  }
  bool needs_gpu_interposer() const override { return true; }
  std::optional<int> master_port() const override { return w_.master_port; }
  int master_port_node() const override { return w_.nodes.empty() ? 0 : w_.nodes.front(); }

 private:
  const CommandWorkload& w_;
};

}  // namespace

std::unique_ptr<WorkloadPlan> make_command_plan(const Scenario& scenario) {
  return std::make_unique<CommandPlan>(std::get<CommandWorkload>(scenario.workload));
}

}  // namespace chaosbench::harness

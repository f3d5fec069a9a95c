#include "harness/workloads/workload_plan.h"

#include <array>
#include <stdexcept>
#include <string>

#include "harness/workloads/workload_kinds.h"

namespace chaosbench::harness {
namespace {

struct WorkloadRow {
  std::string_view kind;  // as workload_kind() names it
  std::unique_ptr<WorkloadPlan> (*make)(const Scenario&);
};

// One row per kind of workload.
constexpr std::array<WorkloadRow, 5> kWorkloadRows{{
    {"collective", make_collective_plan},
    {"train", make_train_plan},
    {"serve", make_serve_plan},
    {"llm", make_llm_plan},
    {"command", make_command_plan},
}};

}  // namespace

std::vector<int> WorkloadPlan::nodes(const ClusterSpec& cluster) const {
  std::vector<int> out;
  for (int n = 0; n < cluster.nodes; ++n) out.push_back(n);
  return out;
}

std::unique_ptr<WorkloadPlan> make_workload_plan(const Scenario& scenario) {
  const std::string_view kind = workload_kind(scenario.workload);
  for (const auto& row : kWorkloadRows)
    if (row.kind == kind) return row.make(scenario);
  throw std::logic_error("no plan for workload kind " + std::string(kind));
}

}  // namespace chaosbench::harness

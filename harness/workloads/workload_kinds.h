// The plans of the built-in kinds and of `command` (workload_plan.h), one a file: the rows
// of workload_plan.cc's table. Each takes the scenario whose workload is of its kind.
#pragma once

#include <memory>

#include "harness/workloads/workload_plan.h"

namespace chaosbench::harness {

std::unique_ptr<WorkloadPlan> make_collective_plan(const Scenario& scenario);
std::unique_ptr<WorkloadPlan> make_train_plan(const Scenario& scenario);
std::unique_ptr<WorkloadPlan> make_serve_plan(const Scenario& scenario);
std::unique_ptr<WorkloadPlan> make_llm_plan(const Scenario& scenario);
std::unique_ptr<WorkloadPlan> make_command_plan(const Scenario& scenario);

}  // namespace chaosbench::harness

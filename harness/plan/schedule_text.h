// `run --dry-run`'s account of the realised fault schedule: each planned occurrence with
// its drawn arrival, the nodes drawn for it, whether its probability draw fired, and when
// it would be applied and reverted — the schedule's own rules (fault_schedule.h: waits
// for a fault's previous occurrence and for exclusive faults) played out on a clock that
// jumps from deadline to deadline, assuming faults apply instantly and no step trigger
// comes. Pure.
#pragma once

#include <string>
#include <vector>

#include "harness/plan/schedule_plan.h"
#include "harness/scenario/scenario.h"

namespace chaosbench::harness {

// One line per planned occurrence, in schedule order; one that would wait past
// `horizon_s` (the scenario's timeout) is said never to come.
std::vector<std::string> describe_schedule(const std::vector<FaultSpec>& faults,
                                           const std::vector<PlannedOccurrence>& plan, double horizon_s);

}  // namespace chaosbench::harness

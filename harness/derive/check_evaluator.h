// Checks from the scenario against the run's metric records: each check becomes one
// result holding the worst matching record (the lowest for a min, the highest for a max).
// A check that matches no record fails: silence is not a pass.
#pragma once

#include <vector>

#include "harness/scenario/scenario.h"
#include "reports/model/run_model.h"

namespace chaosbench::harness {

std::vector<reports::CheckResult> evaluate_checks(const std::vector<CheckSpec>& checks,
                                                  const std::vector<reports::MetricRecord>& records);

}  // namespace chaosbench::harness

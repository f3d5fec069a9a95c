// What the gates compare, shared by the baseline gate (gate.h) and the history gate
// (history_gate.h) so the two never disagree on it: which metric records are gated,
// which are latency-like (they get a p99 row besides the p50), and each record's
// tolerance. docs/gate.md describes the rules. Pure functions.
#pragma once

#include <string>
#include <vector>

#include "reports/model/run_model.h"
#include "reports/model/scenario_facts.h"

namespace chaosbench::reports {

// The phase label's value, "overall" when the record has none.
std::string phase_of(const Labels& labels);

// Gated: a better-direction of "lower" or "higher", and not the harness's own precision
// (`fault/*` records measure the fault, not the system under test).
bool gated(const MetricRecord& record);

// Lower is better and the unit is a time (s, ms, us, ns): the tail matters as much as
// the median.
bool latency_like(const MetricRecord& record);

// The record's tolerance: `dflt`, or the last of the scenario's check rules that names
// its metric, matches its phase (a rule without one matches every phase) and whose
// labels it carries (a later rule overrides an earlier one).
double tolerance_for(const MetricRecord& record, const std::vector<ScenarioFacts::CheckTolerance>& rules,
                     double dflt);

}  // namespace chaosbench::reports

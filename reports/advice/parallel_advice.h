// The tuning-advice rules for hybrid-parallel jobs (tensor × pipeline × data parallel),
// rows of the table in reports/advice/tuning_advice.cc: a slow pipeline stage, a
// slow TP group within its stage, a large pipeline bubble, heavy TP communication. They
// read the per-group records (harness/derive/parallel_derivation.h), the pooled
// comm/time samples, where each rank sat (the coordinate labels of its series) and node
// (processes), and the scenario's microbatches. A data-parallel run has none of those
// records, so none of these fires on it. Pure.
#pragma once

#include <optional>

#include "reports/advice/advice_rule.h"

namespace chaosbench::reports {

// train/straggler_score{pp_stage} < threshold in a phase other than overall (the worst).
std::optional<AdviceRule::Finding> slow_pipeline_stage(const AdviceRule::Context& c, const AdviceRule& rule);

// train/straggler_score{pp_stage, tp_group} < threshold in a phase other than overall.
std::optional<AdviceRule::Finding> slow_tp_group(const AdviceRule::Context& c, const AdviceRule& rule);

// Mean over stages of train/pipeline_bubble{pp_stage} > threshold (%) in the tuning phase;
// `secondary`: points above the analytic bubble from which unequal stages are named.
std::optional<AdviceRule::Finding> pipeline_bubble(const AdviceRule::Context& c, const AdviceRule& rule);

// comm/time{group=tp} p50 ÷ train/step_time p50 > threshold in the tuning phase.
std::optional<AdviceRule::Finding> tp_communication(const AdviceRule::Context& c, const AdviceRule& rule);

}  // namespace chaosbench::reports

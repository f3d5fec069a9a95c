// A hybrid-parallel job's per-group records (tensor × pipeline × data parallel),
// from the step events of one phase that carry a position (train_events.h): which
// pipeline stage and which tensor-parallel group is slow, and how long each stage waits
// for its neighbours. Any trainer that sends the fields gets them, the built-in one or a
// Megatron-LM or DeepSpeed job run as a `command` (docs/metrics-protocol.md, "Hybrid
// parallelism", has every formula). Pure over values.
#pragma once

#include <string>
#include <vector>

#include "harness/derive/train_events.h"
#include "reports/model/run_model.h"

namespace chaosbench::harness {

// Appends to `out`, labels phase = `phase` plus:
//   train/stage_time {pp_stage}            the stage's slowest rank's median stage_ms
//   train/stage_time {pp_stage, tp_group}  the same over one TP group (stages of 2+ groups)
//   train/straggler_score {pp_stage}       fastest stage's time ÷ this stage's (2+ stages)
//   train/straggler_score {pp_stage, tp_group}  fastest TP group of the same stage ÷ this one
//   train/pipeline_bubble {pp_stage}       median bubble_pct of the stage's steps (pp ≥ 2)
// Steps without a position (a data-parallel rank's) are ignored: such a run gets nothing here.
void derive_parallel_records(const std::string& phase, const std::vector<const StepEvent*>& steps,
                             std::vector<reports::MetricRecord>& out);

}  // namespace chaosbench::harness

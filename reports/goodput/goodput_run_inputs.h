// Where the goodput model's inputs come from when nobody gives them: the assumed regime
// (docs/goodput-model.md: a Llama 3-scale job), and a run's results.json: its measured
// step time, save cost and per-failure costs, its scenario's checkpoint interval,
// recovery mode and soak fault. Each value keeps its provenance and source.
#pragma once

#include <vector>

#include "reports/goodput/goodput_inputs.h"
#include "reports/model/run_model.h"

namespace chaosbench::reports {

// Llama 3 405B's pre-training (Meta, "The Llama 3 Herd of Models", 2024, §3.3.4): 419
// unexpected interruptions in 54 days on 16,384 GPUs: one per GPU every 2,111 days, one
// per 8-GPU node every 264 days.
inline constexpr double kLlama3Interruptions = 419, kLlama3Days = 54, kLlama3Gpus = 16384;

// Everything assumed: step 10 s, a checkpoint every hour costing 30 s, detect 1 min,
// restart 5 min, restore 3 min, no recompute, no startup, checkpoint mode, per-node MTBF
// from Llama 3 (above), poisson, 8 GPUs per node, the default node grid.
GoodputInputs assumed_goodput_inputs();

// 1, 2, 5, 10, 20, 50, ..., 100,000.
std::vector<int> default_node_grid();

// Replaces the assumed values with what the run measured and its scenario says (see
// docs/goodput-model.md for each record read) and notes what was missing. Throws
// std::invalid_argument when the run is no training job.
void read_run_inputs(const RunResult& run, GoodputInputs& in);

// The checkpoint interval from the scenario's every_steps and the step time, unless the
// interval was given: call after the step time is final.
void derive_checkpoint_interval(GoodputInputs& in);

}  // namespace chaosbench::reports

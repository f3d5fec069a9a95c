// The trainer's metrics derived from its events (train_events.h): train/* per phase, a
// hybrid-parallel job's per-group records (parallel_derivation.h), and the entry point
// that adds resilience/* (resilience_derivation.h).
// Definitions: the metric catalogue (`chaosbench metrics`); how each follows from the events:
// docs/metrics-protocol.md. Pure functions over values; the result builder calls
// derive_training_metrics once, after aggregate().
#pragma once

#include <vector>

#include "harness/derive/train_events.h"
#include "reports/model/run_model.h"

namespace chaosbench::harness {

// Per phase (each phase name, repeats pooled, and "overall" = [0, end_s]), from the step
// events whose time falls in it: train/throughput, train/overlap, train/mfu, train/mfu_hw,
// train/rank_imbalance and train/straggler_score (labels phase, rank; a hybrid rank's
// also pp_stage, compared within its stage), a hybrid job's per-stage and per-TP-group
// records; overall only: train/time_to_target (when a target is given) and train/loss_ratio.
std::vector<reports::MetricRecord> derive_train_records(const TrainingInputs& in, const TrainTimeline& timeline);

// train/* and resilience/* records; no train/* or
// resilience/* when the workload sent no step or train_start event.
std::vector<reports::MetricRecord> derive_training_metrics(const TrainingInputs& in);

}  // namespace chaosbench::harness

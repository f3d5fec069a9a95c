// resilience/* metrics from the trainer's events (train_events.h) and the faults the
// harness applied: per disrupted fault occurrence time_to_detect, time_to_recover and
// lost_steps; per fault phase throughput_retention; overall restarts, goodput and badput
// by bucket. Definitions: docs/metrics-protocol.md. Pure over values.
#pragma once

#include <vector>

#include "harness/derive/train_events.h"
#include "reports/model/run_model.h"

namespace chaosbench::harness {

// `train_records` are derive_train_records' (throughput_retention reads train/throughput).
std::vector<reports::MetricRecord> derive_resilience_records(const TrainingInputs& in, const TrainTimeline& timeline,
                                                             const std::vector<reports::MetricRecord>& train_records);

}  // namespace chaosbench::harness

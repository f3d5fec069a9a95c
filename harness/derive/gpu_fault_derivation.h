// Metrics of GPU faults from the trainer's events:
// - silent data corruption: for each bit flip the GPU fault emulation reports
//   (fault_injected {kind: gpu.bitflip}), whether and how soon a replica check caught it
//   (sdc_detected): resilience/sdc_detection_steps per flip and resilience/sdc_caught over
//   the run. Flips in a rank's own gradients before the allreduce are summed into every
//   replica and are never caught: they count as missed.
// - gpu/xid_events: device errors with an Xid (failure_detected {reason: device, xid}),
//   counted per Xid.
// Pure over values.
#pragma once

#include <vector>

#include "harness/derive/train_events.h"
#include "reports/model/run_model.h"

namespace chaosbench::harness {

void gpu_fault_records(const TrainTimeline& timeline, std::vector<reports::MetricRecord>& out);

}  // namespace chaosbench::harness

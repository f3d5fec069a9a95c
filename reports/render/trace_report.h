// trace.json in the Chrome trace-event format (opens in Perfetto and chrome://tracing):
// one track per rank with its steps split into compute and exposed communication (from
// the train/step_time, train/compute_time and train/comm_time series; comm/latency for
// the collective benchmark), one track per fault window, and instant events for
// checkpoints, failures, restarts and recoveries (run.events). Pure.
#pragma once

#include <string>

#include "reports/model/run_model.h"

namespace chaosbench::reports {

std::string render_trace(const RunResult& run);

}  // namespace chaosbench::reports

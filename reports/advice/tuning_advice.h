// Tuning advice: a rule table (data, not branches scattered over the code) from a run's
// metrics to recommendations. Each rule names the metrics it reads, its threshold and its
// advice; a rule that fires cites the values that fired it ("exposed communication is
// 38% of step time (comm_time p50 24.1 ms of step_time p50 63.2 ms)"). Pure.
#pragma once

#include <string>
#include <vector>

#include "reports/model/run_model.h"

namespace chaosbench::reports {

struct Advice {
  std::string rule;            // stable id: "exposed-communication"
  std::string title;           // one line
  std::string evidence;        // the values that fired it, with units
  std::string recommendation;  // what to change, and the expected effect where it can be computed
  std::string severity;        // "high", "medium", "low"
};

std::vector<Advice> tuning_advice(const RunResult& run);

}  // namespace chaosbench::reports

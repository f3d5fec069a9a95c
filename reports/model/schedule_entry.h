// One occurrence of a fault in a run's realised schedule (results.json "schedule"): what
// the scenario's seed drew before the run — a random arrival's time, whether its
// probability draw fired, the nodes a random target picked, the occurrence a chained
// fault follows. What then happened to it is in the run's FaultRecords.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace chaosbench::reports {

struct ScheduleEntry {
  std::string fault;                     // the fault's name
  std::string type;
  int occurrence = 1;                    // 1-based among the fault's planned occurrences
  std::optional<double> arrival_s;       // a random arrival's drawn time
  std::optional<double> due_s;           // planned time (at, repeat, arrivals)
  std::optional<std::int64_t> at_step;
  std::string after;                     // "name#k": the occurrence it follows; "" when none
  double delay_s = 0;
  std::optional<double> duration_s;
  bool fires = true;                     // its probability draw (and its parent's)
  std::vector<int> nodes;                // a random target's draw; empty otherwise
};

}  // namespace chaosbench::reports

// The realised fault schedule: every occurrence of every fault, drawn from the scenario
// seed before the run starts — random arrival times (Poisson or Weibull), the
// probability draw of each occurrence, the nodes a random target picks for it, and the
// links of `after` chains. Pure and deterministic: the same faults, node count, seed and
// horizon give the same plan, byte for byte in `run --dry-run` and results.json.
// Each fault draws from streams of its own (its index mixed into the seed), so appending a
// fault does not move another's draws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "harness/scenario/scenario.h"
#include "reports/model/schedule_entry.h"

namespace chaosbench::harness {

struct PlannedOccurrence {
  std::size_t fault = 0;                 // index into the scenario's faults
  int number = 1;                        // 1-based among the fault's planned occurrences
  std::optional<double> arrival_s;       // arrivals: the drawn arrival time
  std::optional<double> due_s;           // at, repeat or arrivals
  std::optional<std::int64_t> due_step;  // at_step
  std::optional<std::size_t> after;      // `after`: the plan index of the occurrence it follows
  double delay_s = 0;                    // `after`: the time from that occurrence's application
  std::optional<double> duration_s;
  bool fires = true;                     // false: its probability draw (or its parent's) said no
  std::vector<int> nodes;                // drawn for a random or percent target; empty otherwise
};

// `nodes`: the cluster's node count (0: no target is drawn). `horizon_s`: arrivals end
// there (the scenario's timeout). Occurrences are grouped by fault in scenario order; an
// `after` link points to an earlier fault's occurrence or a later one's, never to itself.
std::vector<PlannedOccurrence> plan_schedule(const std::vector<FaultSpec>& faults, int nodes, std::uint64_t seed,
                                             double horizon_s);

// The plan as results.json records it (names instead of indices).
std::vector<reports::ScheduleEntry> schedule_entries(const std::vector<FaultSpec>& faults,
                                                     const std::vector<PlannedOccurrence>& plan);

// The nodes that a "random" (count) pick chooses for a fault's occurrence; occurrence 1
// picks what earlier versions picked for every occurrence, so single faults are unchanged.
std::vector<int> pick_nodes(int nodes, int count, std::uint64_t seed, std::size_t fault_index, int occurrence);

}  // namespace chaosbench::harness

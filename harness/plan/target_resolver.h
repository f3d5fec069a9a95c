// Resolves a fault's target form against what this run started: node indices, ranks and
// the pids running them now. Random choices ("random", "percent") come from the scenario
// seed and the fault's index, so the same seed picks the same nodes in every run.
#pragma once

#include <cstdint>
#include <sys/types.h>
#include <vector>

#include "faults/target.h"
#include "harness/scenario/scenario.h"

namespace chaosbench::harness {

struct RankProcess {
  int rank = 0;
  int node = 0;
  pid_t pid = -1;  // -1 when not running
};

class NodeCgroups;

// `cgroups` (may be null) adds the targeted nodes' cgroup directories.
faults::ResolvedTarget resolve_target(const TargetSpec& target, const ClusterSpec& cluster,
                                      const std::vector<RankProcess>& ranks, std::uint64_t seed,
                                      std::size_t fault_index, const NodeCgroups* cgroups = nullptr);

}  // namespace chaosbench::harness

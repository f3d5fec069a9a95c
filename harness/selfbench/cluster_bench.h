// The cluster self-benchmark (`chaosbench bench cluster`): bring-up plus tear-down of the
// virtual cluster (N network namespaces on a bridge, through libnl), timed;
// perf/harness/cluster_bringup.sh compares it with the same topology built by `ip` commands.
#pragma once

#include <ostream>

namespace chaosbench::harness {

struct ClusterBenchOptions {
  int nodes = 16;   // 1..64
  int repeat = 7;   // repetitions; the median is reported
};

// Prints one JSON line (median, min, max in ms). Throws HostError (exit 3) without root.
void run_cluster_bench(const ClusterBenchOptions& options, std::ostream& out);

}  // namespace chaosbench::harness

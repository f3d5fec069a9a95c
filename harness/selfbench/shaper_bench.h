// The shaper self-benchmark (`chaosbench bench shaper`): fault/apply_latency of a
// netlink-applied network fault. A TcShaper rate rule (htb root, class, u32 dst filter)
// is put in effect and taken out on a 2-node virtual cluster, against the same kernel
// change made by running `tc` once a step, in the same run. Needs root. It measures a
// fault backend itself, so it builds one directly (docs/architecture.md).
#pragma once

#include <ostream>

namespace chaosbench::harness {

struct ShaperBenchOptions {
  int repeat = 200;  // timed repetitions of each
  int warmup = 5;    // untimed repetitions first
};

// Prints one JSON line to `out`, then a table. Throws HostError (exit 3) without root.
void run_shaper_bench(const ShaperBenchOptions& options, std::ostream& out);

}  // namespace chaosbench::harness

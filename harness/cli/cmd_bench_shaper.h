// chaosbench bench shaper -- fault/apply_latency of a netlink-applied network fault: a
// TcShaper rate rule (htb root, class, u32 dst filter) put in effect and taken out on a
// 2-node virtual cluster, against the same kernel change made by running `tc` once a step,
// in the same run. Needs root (network namespaces).
#pragma once

#include "harness/cli/commands.h"

namespace chaosbench::harness {

// `args`: what follows `bench shaper` ([--repeat N] [--warmup W]). Prints one JSON line,
// then a table. Returns an exit code (exit_code.h); HostError without root.
int bench_shaper(const Args& args);

}  // namespace chaosbench::harness

// chaosbench bench delay-line — the NFQUEUE delay line (faults/network/delay_line.h)
// measured on a 2-node virtual cluster with outside tools: the RTT it adds at several
// delays (ping) against what was asked, and one TCP stream's throughput through it
// (iperf3). Needs root, ping and iperf3.
#pragma once

#include "harness/cli/commands.h"

namespace chaosbench::harness {

// `args`: the arguments after `bench delay-line`. Prints one JSON line per measurement,
// then a table. Returns kExitPass when every goal is met (effect error <= 5% at each
// delay, >= 1 Gbit/s at 5 ms), kExitCheckFailed when one is missed; throws HostError
// (exit 3) when the cluster or the delay line cannot be built, UsageError on bad options.
int bench_delay_line(const Args& args);

}  // namespace chaosbench::harness

// The delay-line self-benchmark (`chaosbench bench delay-line`): the NFQUEUE delay line
// (faults/network/delay_line.h) measured on a 2-node virtual cluster with outside tools:
// the RTT it adds at several delays (ping) against what was asked, and one TCP stream's
// throughput through it (iperf3). Needs root, ping and iperf3. It measures a fault
// backend itself, so it alone of the harness builds one directly (docs/architecture.md).
#pragma once

#include <ostream>
#include <vector>

namespace chaosbench::harness {

struct DelayLineBenchOptions {
  std::vector<double> delays_ms{1, 5, 20, 100};  // delays measured with ping
  int pings = 50;                 // per delay (and per baseline); medians are compared
  double throughput_delay_ms = 5;  // the delay of the iperf3 stream
  int seconds = 5;                // iperf3 duration; 0: no throughput test
};

// Prints one JSON line per measurement to `out`, then a table. Returns whether every goal
// is met (effect error <= 5% at each delay, >= 1 Gbit/s at the throughput delay). Throws
// HostError (exit 3) when the cluster or the delay line cannot be built. Blocking: about
// (pings * 40 ms) per delay plus twice `seconds`.
bool run_delay_line_bench(const DelayLineBenchOptions& options, std::ostream& out);

}  // namespace chaosbench::harness

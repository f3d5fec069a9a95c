// The communication row of the micro-benchmark suite: comm/latency of a 2-rank gloo
// ping-pong on loopback. Both ranks live in this process (rank 1 on a helper thread),
// meet through a FileStore in a fresh directory under /tmp (removed afterwards), and
// bounce one message of 4 B or 64 KiB (unbound-buffer send/recv over gloo's TCP
// transport). The value is the one-way latency, RTT / 2, in us; Google Benchmark's own
// time column shows the round trip.
#pragma once

#include <vector>

#include "bench/micro/micro_benchmark.h"

namespace chaosbench::bench::micro {

std::vector<MicroBenchmark> comm_benchmarks();

}  // namespace chaosbench::bench::micro

// chaosbench bench micro -- the micro-benchmark suite (Google Benchmark, in-process):
// GEMM TFLOP/s, STREAM-triad memory bandwidth, a 2-rank gloo ping-pong's latency,
// checkpoint write bandwidth to the run directory's disk, and the tool's own costs
// (scenario parse, metric ingestion, report generation). Results enter the run model:
// DIR/results.json, as any run. Needs no root.
#pragma once

#include "harness/cli/commands.h"

namespace chaosbench::harness {

// `args`: what follows `bench micro` ([--filter REGEX] [--out DIR] [--min-time S]
// [--scenario FILE]). Prints Google Benchmark's table, then the path of results.json.
// Returns kExitPass, or kExitCheckFailed when a benchmark failed (results.json says why).
int bench_micro(const Args& args);

}  // namespace chaosbench::harness

// The built-in collective benchmark, one process per rank: gloo over TCP, a size sweep
// per collective and algorithm, timed per iteration, results checked, samples sent through
// the metrics wire protocol. Knows nothing of the harness or of command lines.
#pragma once

#include <optional>
#include <string>

#include "bench/collective/collective_config.h"
#include "bench/protocol/metrics_client.h"

namespace chaosbench::bench {

// Exit codes, as README.md "Exit codes".
inline constexpr int kCollectiveOk = 0;
inline constexpr int kCollectiveFailed = 1;     // a wrong result or a gloo error
inline constexpr int kCollectiveBadConfig = 2;  // the config cannot run

// Why `cfg` cannot run ("world_size must be at least 2"), or nullopt when it can.
std::optional<std::string> collective_config_error(const CollectiveConfig& cfg);

// Runs this rank's part of the benchmark and returns a process exit code (above). Blocks
// until every collective has run or an error occurs; never exits the process. Errors go
// to stderr as one line ("rank 2: allreduce ring 16MiB: Connection closed by peer ...");
// rank 0 prints the nccl-tests style table to stdout. SIGPIPE is ignored for the duration
// of the call (process-wide), so that a dead peer is an error result, not a killed rank.
//
// Records sent through `metrics`, by every rank (labels: collective, algorithm,
// bytes = actual bytes, ranks = world size):
//   sample comm/latency (us)          one per timed iteration, time = middle of that iteration
//                                     (an op spanning a fault window counts in it)
//   event  step {"step": N}           after each timed iteration, N from 1 over the sweep
//   sample comm/wrong_elements (count) after the check iteration, this rank's count
// The client is flushed after each size and at the end, never inside a timed loop.
int run_collective_benchmark(const CollectiveConfig& cfg, MetricsClient& metrics);

}  // namespace chaosbench::bench

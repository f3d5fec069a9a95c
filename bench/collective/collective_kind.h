// Facts about each collective the benchmark runs: its name in scenarios and results and
// its bus-bandwidth factor. Source of the factors: NVIDIA nccl-tests doc/PERFORMANCE.md
// ("busBw = algBw * factor": allreduce 2(n-1)/n; reduce-scatter, all-gather, all-to-all
// (n-1)/n; broadcast, reduce 1). Data, not code, so reporters and tests share one table.
#pragma once

#include <optional>
#include <span>
#include <string_view>

namespace chaosbench::bench {

enum class CollectiveKind { kAllreduce, kAllgather, kBroadcast, kReduceScatter };

struct CollectiveInfo {
  CollectiveKind kind;
  std::string_view name;  // "allreduce", "allgather", "broadcast", "reduce_scatter"
  // Algorithms gloo offers for it; the first is the default.
  std::span<const std::string_view> algorithms;
};

std::span<const CollectiveInfo> collective_table();
const CollectiveInfo* find_collective(std::string_view name);

// busbw / algbw for `ranks` participants (nccl-tests doc/PERFORMANCE.md).
double bus_bandwidth_factor(CollectiveKind kind, int ranks);

}  // namespace chaosbench::bench

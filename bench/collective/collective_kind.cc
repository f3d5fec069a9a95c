#include "bench/collective/collective_kind.h"

#include <array>

namespace chaosbench::bench {
namespace {

constexpr std::array<std::string_view, 2> kAllreduceAlgorithms{"ring", "halving_doubling"};
// Names say what gloo really runs: gloo::allgather is a ring, gloo::broadcast a binomial
// tree (gloo/broadcast.cc; the old-API BroadcastOneToAll is not used), and
// ReduceScatterHalvingDoubling recursive halving.
constexpr std::array<std::string_view, 1> kRing{"ring"};
constexpr std::array<std::string_view, 1> kBinomialTree{"binomial_tree"};
constexpr std::array<std::string_view, 1> kHalvingDoubling{"halving_doubling"};

constexpr std::array<CollectiveInfo, 4> kCollectives{{
    {CollectiveKind::kAllreduce, "allreduce", kAllreduceAlgorithms},
    {CollectiveKind::kAllgather, "allgather", kRing},
    {CollectiveKind::kBroadcast, "broadcast", kBinomialTree},
    {CollectiveKind::kReduceScatter, "reduce_scatter", kHalvingDoubling},
}};

}  // namespace

std::span<const CollectiveInfo> collective_table() { return kCollectives; }

const CollectiveInfo* find_collective(std::string_view name) {
  for (const auto& c : kCollectives) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

double bus_bandwidth_factor(CollectiveKind kind, int ranks) {
  const double n = ranks;
  switch (kind) {
    case CollectiveKind::kAllreduce:
      return 2.0 * (n - 1) / n;
    case CollectiveKind::kAllgather:
    case CollectiveKind::kReduceScatter:
      return (n - 1) / n;
    case CollectiveKind::kBroadcast:
      return 1.0;
  }
  return 1.0;
}

}  // namespace chaosbench::bench

#include "bench/collective/collective_op.h"

#include <stdexcept>
#include <string>

namespace chaosbench::bench {

std::unique_ptr<CollectiveOp> make_collective_op(CollectiveKind kind, std::string_view algorithm,
                                                 const std::shared_ptr<gloo::Context>& context,
                                                 std::size_t elements) {
  // Collectives with a single gloo algorithm accept only its name from collective_table().
  auto only = [&](std::string_view name) {
    const auto* info = find_collective(name);
    if (info == nullptr || info->algorithms.empty() || info->algorithms.front() != algorithm) {
      throw std::invalid_argument(std::string(name) + ": unknown algorithm \"" +
                                  std::string(algorithm) + "\"");
    }
  };
  switch (kind) {
    case CollectiveKind::kAllreduce:
      return make_allreduce_op(algorithm, context, elements);
    case CollectiveKind::kAllgather:
      only("allgather");
      return make_allgather_op(context, elements);
    case CollectiveKind::kBroadcast:
      only("broadcast");
      return make_broadcast_op(context, elements);
    case CollectiveKind::kReduceScatter:
      only("reduce_scatter");
      return make_reduce_scatter_op(context, elements);
  }
  throw std::invalid_argument("unknown collective kind");
}

}  // namespace chaosbench::bench

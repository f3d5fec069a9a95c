#include "bench/train/hybrid/stage_plan.h"

#include <stdexcept>

#include <fmt/format.h>

namespace chaosbench::bench::train {

std::vector<StagePlan> plan_stages(const std::vector<int>& widths, int pp, int tp) {
  const int layers = static_cast<int>(widths.size()) - 1;
  std::vector<StagePlan> out;
  for (const auto& [first, last] : split_layers(layers, pp)) {
    StagePlan s{first, last, {}};
    for (int l = first; l < last; ++l) {
      const int offset = l - first;
      const bool paired = tp > 1 && (offset % 2 == 1 || l + 1 < last);
      s.splits.push_back(!paired ? LayerSplit::kReplicated : offset % 2 == 0 ? LayerSplit::kColumn : LayerSplit::kRow);
      if (s.splits.back() == LayerSplit::kColumn && widths[static_cast<std::size_t>(l) + 1] % tp != 0)
        throw std::invalid_argument(tp_split_error(widths[static_cast<std::size_t>(l) + 1], tp));
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::optional<ParallelError> parallel_error(const std::vector<int>& widths, int batch, int world,
                                            const ParallelDims& dims, int microbatches) {
  const int layers = static_cast<int>(widths.size()) - 1;
  if (dims.tp < 1 || dims.pp < 1 || dims.dp < 1) return ParallelError{"", "tp, pp and dp must each be at least 1", {}};
  if (dims.world() != world)
    return ParallelError{"", fmt::format("tp {} × pp {} × dp {} is {} ranks, but the cluster runs {} (nodes × "
                                         "ranks_per_node)", dims.tp, dims.pp, dims.dp, dims.world(), world), {}};
  if (dims.pp > layers)
    return ParallelError{"pp", fmt::format("{} pipeline stages but the model has {} layers: every stage needs one",
                                           dims.pp, layers), {}};
  if (dims.tp > 1) {
    const auto stages = split_layers(layers, dims.pp);
    for (std::size_t s = 0; s < stages.size(); ++s) {
      const auto [first, last] = stages[s];
      if (last - first < 2)
        return ParallelError{"tp", fmt::format("tp {} splits column/row pairs of layers, but stage {} holds only layer "
                                               "{}: use fewer stages or more layers", dims.tp, s, first), {}};
      for (int l = first; l + 1 < last; l += 2) {
        const int w = widths[static_cast<std::size_t>(l) + 1];
        if (w % dims.tp != 0)
          return ParallelError{"tp", fmt::format("tp {} does not divide width {} (workload.model.layers[{}]), the "
                                                 "inner width of the column/row pair of layers {} and {}",
                                                 dims.tp, w, l + 1, l, l + 1), l + 1};
      }
    }
  }
  if (batch % dims.dp != 0)
    return ParallelError{"dp", fmt::format("batch_size {} does not split evenly over dp {} replicas", batch, dims.dp),
                         {}};
  if (microbatches < 1) return ParallelError{"microbatches", "expected at least 1", {}};
  const int per_replica = batch / dims.dp;
  if (per_replica % microbatches != 0)
    return ParallelError{"microbatches", fmt::format("batch_size {} over dp {} is {} samples per replica, which {} "
                                                     "microbatches do not divide", batch, dims.dp, per_replica,
                                                     microbatches), {}};
  return std::nullopt;
}

}  // namespace chaosbench::bench::train

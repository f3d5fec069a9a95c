#include "bench/train/hybrid/parallel_layout.h"

#include <stdexcept>
#include <string>

namespace chaosbench::bench::train {

ParallelLayout::ParallelLayout(ParallelDims dims) : dims_(dims) {
  if (dims.tp < 1 || dims.pp < 1 || dims.dp < 1)
    throw std::invalid_argument("parallel sizes tp, pp and dp must each be at least 1");
}

RankCoords ParallelLayout::coords(int rank) const {
  if (rank < 0 || rank >= world())
    throw std::out_of_range("rank " + std::to_string(rank) + " is outside a world of " + std::to_string(world()));
  const int tp_rank = rank % dims_.tp;
  const int rest = rank / dims_.tp;
  return {tp_rank, rest / dims_.dp, rest % dims_.dp};
}

int ParallelLayout::rank(RankCoords c) const {
  if (c.tp_rank < 0 || c.tp_rank >= dims_.tp || c.pp_stage < 0 || c.pp_stage >= dims_.pp || c.dp_rank < 0 ||
      c.dp_rank >= dims_.dp)
    throw std::out_of_range("parallel coordinates out of range");
  return c.tp_rank + dims_.tp * (c.dp_rank + dims_.dp * c.pp_stage);
}

std::vector<int> ParallelLayout::tp_group(int r) const {
  const auto c = coords(r);
  return tp_group_ranks(c.dp_rank + dims_.dp * c.pp_stage);
}

std::vector<int> ParallelLayout::pp_group(int r) const {
  const auto c = coords(r);
  std::vector<int> out;
  for (int s = 0; s < dims_.pp; ++s) out.push_back(rank({c.tp_rank, s, c.dp_rank}));
  return out;
}

std::vector<int> ParallelLayout::dp_group(int r) const {
  const auto c = coords(r);
  std::vector<int> out;
  for (int d = 0; d < dims_.dp; ++d) out.push_back(rank({c.tp_rank, c.pp_stage, d}));
  return out;
}

std::vector<int> ParallelLayout::stage_ranks(int stage) const {
  if (stage < 0 || stage >= dims_.pp) throw std::out_of_range("pipeline stage " + std::to_string(stage) + " does not exist");
  std::vector<int> out;
  for (int d = 0; d < dims_.dp; ++d)
    for (int t = 0; t < dims_.tp; ++t) out.push_back(rank({t, stage, d}));
  return out;
}

std::vector<int> ParallelLayout::tp_group_ranks(int index) const {
  if (index < 0 || index >= tp_groups()) throw std::out_of_range("TP group " + std::to_string(index) + " does not exist");
  std::vector<int> out;
  for (int t = 0; t < dims_.tp; ++t) out.push_back(rank({t, index / dims_.dp, index % dims_.dp}));
  return out;
}

std::vector<int> ParallelLayout::replica_ranks(int replica) const {
  if (replica < 0 || replica >= dims_.dp)
    throw std::out_of_range("data-parallel replica " + std::to_string(replica) + " does not exist");
  std::vector<int> out;
  for (int s = 0; s < dims_.pp; ++s)
    for (int t = 0; t < dims_.tp; ++t) out.push_back(rank({t, s, replica}));
  return out;
}

std::vector<std::pair<int, int>> split_layers(int layers, int stages) {
  if (stages < 1 || stages > layers)
    throw std::invalid_argument(std::to_string(stages) + " pipeline stages cannot split " + std::to_string(layers) +
                                " layers: every stage needs at least one");
  std::vector<std::pair<int, int>> out;
  int first = 0;
  for (int s = 0; s < stages; ++s) {
    const int count = layers / stages + (s < layers % stages ? 1 : 0);
    out.emplace_back(first, first + count);
    first += count;
  }
  return out;
}

std::string tp_split_error(int width, int tp) {
  if (tp < 1) return "the TP size must be at least 1";
  if (width % tp != 0)
    return "width " + std::to_string(width) + " does not split over " + std::to_string(tp) + " tensor-parallel ranks";
  return "";
}

}  // namespace chaosbench::bench::train

// Where a rank sits in a hybrid-parallel job (tensor × pipeline × data parallel) and
// which ranks it shares each kind of group with: the first piece of hybrid parallelism in
// the trainer, pure arithmetic so faults, targets and reports can use it too.
// The order is Megatron-LM's default ("tp-cp-ep-dp-pp", megatron/core/parallel_state.py
// RankGenerator): the tensor-parallel rank varies fastest, then the data-parallel rank,
// then the pipeline stage, so a TP group is contiguous ranks (one node, where the
// bandwidth is) and a pipeline's stages are the farthest apart:
//   rank = tp_rank + tp × (dp_rank + dp × pp_stage).
// Threads: immutable after construction.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace chaosbench::bench::train {

struct ParallelDims {
  int tp = 1;  // tensor-parallel size: ranks that split each layer
  int pp = 1;  // pipeline stages: ranks that split the layers
  int dp = 1;  // data-parallel replicas of the whole pipeline
  int world() const { return tp * pp * dp; }
  bool operator==(const ParallelDims&) const = default;
};

struct RankCoords {
  int tp_rank = 0;
  int pp_stage = 0;
  int dp_rank = 0;
  bool operator==(const RankCoords&) const = default;
};

class ParallelLayout {
 public:
  // Throws std::invalid_argument unless every size is at least 1.
  explicit ParallelLayout(ParallelDims dims);

  const ParallelDims& dims() const { return dims_; }
  int world() const { return dims_.world(); }
  // Throw std::out_of_range for a rank outside [0, world) or coordinates out of range.
  RankCoords coords(int rank) const;
  int rank(RankCoords c) const;

  // The groups a rank belongs to, in rank order (the pipeline's in stage order).
  std::vector<int> tp_group(int rank) const;  // same stage and replica: one layer's shards
  std::vector<int> pp_group(int rank) const;  // same TP rank and replica: one pipeline
  std::vector<int> dp_group(int rank) const;  // same TP rank and stage: one gradient allreduce

  // The ranks a fault target names: every rank of pipeline stage `stage`; TP group
  // `index` (numbered dp_rank + dp × pp_stage, in rank order); data-parallel replica `replica`.
  std::vector<int> stage_ranks(int stage) const;
  std::vector<int> tp_group_ranks(int index) const;
  std::vector<int> replica_ranks(int replica) const;
  int tp_groups() const { return dims_.dp * dims_.pp; }

 private:
  ParallelDims dims_;
};

// Splits `layers` consecutive layers into `stages` contiguous [first, last) ranges, as
// even as possible; the first `layers % stages` stages take one more. Throws
// std::invalid_argument when stages < 1 or stages > layers (a stage without a layer).
std::vector<std::pair<int, int>> split_layers(int layers, int stages);

// "" when `width` splits over `tp` ranks (Megatron's column- and row-parallel layers need
// every sharded width divisible by tp), else why not.
std::string tp_split_error(int width, int tp);

}  // namespace chaosbench::bench::train

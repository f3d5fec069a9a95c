// How a hybrid-parallel job cuts the trainer's MLP: which layers each pipeline stage holds
// and how its tensor-parallel ranks split each of them (Megatron-LM's MLP block,
// Shoeybi et al. 2019 §3): within a stage, layers pair up from the stage's first layer, a
// column-parallel layer (its output width split over tp, each rank applying the ReLU to
// its own slice) followed by a row-parallel one (its input width split, the partial
// outputs summed by one allreduce in forward; the column layer's input gradient summed by
// one in backward). A stage's trailing odd layer runs whole on every TP rank. So only a
// pair's inner width must divide by tp.
// Also the one check of a parallel block's consistency with the model, batch and world,
// shared by the scenario parser and the worker. Pure functions; no threads.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bench/train/hybrid/parallel_layout.h"

namespace chaosbench::bench::train {

enum class LayerSplit { kReplicated, kColumn, kRow };

struct StagePlan {
  int first = 0;  // the stage's layers are [first, last), numbered over the whole model
  int last = 0;
  std::vector<LayerSplit> splits;  // one per layer of the stage
};

// One plan per stage. Throws std::invalid_argument for more stages than layers or a pair
// whose inner width tp does not divide (parallel_error() says which, for a scenario).
// `widths`: input width first (layer l maps widths[l] to widths[l + 1]).
std::vector<StagePlan> plan_stages(const std::vector<int>& widths, int pp, int tp);

struct ParallelError {
  std::string key;      // the offending key under workload.parallel ("tp", "pp", ...), or "" for the block
  std::string message;  // what is wrong, with the numbers
  std::optional<int> layer_width;  // workload.model.layers index the message is about, when one
};

// Why `dims` (dp already resolved) with `microbatches` cannot train `widths` with a global
// batch of `batch` on `world` ranks, or nullopt. Checks, in order: world = tp × pp × dp;
// stages <= layers; with tp > 1, every stage holds a column/row pair and tp divides every
// pair's inner width; batch divisible by dp; each replica's batch by microbatches.
std::optional<ParallelError> parallel_error(const std::vector<int>& widths, int batch, int world,
                                            const ParallelDims& dims, int microbatches);

}  // namespace chaosbench::bench::train

// Where a hybrid-parallel rank (tensor × pipeline × data parallel) sat when it
// reported a step: its coordinates and the group sizes its `step` event carries
// (docs/metrics-protocol.md, "Hybrid parallelism"). The harness numbers TP groups the
// way fault targets do (bench/train/hybrid/parallel_layout.h), but takes every coordinate from
// the event rather than from the rank number, so a trainer that orders its ranks
// differently (DeepSpeed, a custom Megatron order) still gets the right groups.
#pragma once

#include <cstdint>

namespace chaosbench::harness {

struct ParallelPosition {
  std::int64_t tp_rank = 0, pp_stage = 0, dp_rank = 0;
  std::int64_t tp = 1, pp = 1, dp = 1;

  // The TP group: the ranks that split one stage's layers in one replica.
  std::int64_t tp_group() const { return dp_rank + dp * pp_stage; }
  // Sizes of at least 1 and each coordinate inside its size: anything else is not a
  // position the report can place (the event is then read as a data-parallel rank's).
  // Sizes above 2^20 (more ranks than any job has) are refused too, so tp_group() cannot
  // overflow whatever a workload sends.
  bool valid() const {
    constexpr std::int64_t kMaxSize = std::int64_t{1} << 20;
    return tp >= 1 && pp >= 1 && dp >= 1 && tp <= kMaxSize && pp <= kMaxSize && dp <= kMaxSize && tp_rank >= 0 &&
           tp_rank < tp && pp_stage >= 0 && pp_stage < pp && dp_rank >= 0 && dp_rank < dp;
  }
};

}  // namespace chaosbench::harness

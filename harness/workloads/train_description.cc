#include "harness/workloads/train_description.h"

#include <algorithm>

#include <fmt/format.h>

namespace chaosbench::harness {
namespace {

// How the gradients of `replicas` data-parallel replicas were summed (train_rank.cc and
// hybrid_rank.cc pick the reducer the same way): NCCL when the backend says so, else the
// trainer's own TCP ring or gloo's algorithm of that name.
std::string gradient_reducer(const bench::train::TrainSettings& s, std::int64_t replicas) {
  if (replicas < 2) return "one replica: no gradient allreduce";
  if (s.backend == "nccl") return "NCCL allreduce";
  if (s.algorithm == "tcp_ring") return "tcp_ring allreduce (the trainer's own TCP ring)";
  return fmt::format("gloo/tcp {} allreduce", s.algorithm);
}

}  // namespace

std::string describe_train_run(const bench::train::TrainSettings& s, std::int64_t world) {
  const std::string device = s.device == "cuda" ? "cuda device (cuBLAS)" : "cpu device (OpenBLAS)";
  if (!s.parallel.hybrid()) return fmt::format("{}, {}", device, gradient_reducer(s, world));
  // tp × pp × dp = world; dp 0 in the settings follows the world (train_settings.h).
  const std::int64_t groups = std::int64_t{s.parallel.tp} * s.parallel.pp;
  const std::int64_t dp = s.parallel.dp > 0 ? s.parallel.dp : std::max<std::int64_t>(1, world / groups);
  return fmt::format("{}, tp {} x pp {} x dp {} (activations and TP sums on point-to-point TCP links), {}", device,
                     s.parallel.tp, s.parallel.pp, dp, gradient_reducer(s, dp));
}

}  // namespace chaosbench::harness

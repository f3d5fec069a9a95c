#include "bench/train/train_config.h"

#include <algorithm>

#include <fmt/format.h>

#include "bench/train/hybrid/stage_plan.h"

namespace chaosbench::bench::train {

std::optional<std::string> train_config_error(const TrainConfig& cfg) {
  if (cfg.world_size < 1) return fmt::format("world_size must be at least 1, got {}", cfg.world_size);
  if (cfg.rank < 0 || cfg.rank >= cfg.world_size)
    return fmt::format("rank {} is outside 0..{}", cfg.rank, cfg.world_size - 1);
  if (cfg.layers.size() < 2) return std::string("the model needs at least an input and an output width");
  for (int w : cfg.layers)
    if (w < 1) return fmt::format("layer widths must be at least 1, got {}", w);
  if (cfg.batch_size < cfg.world_size)
    return fmt::format("batch_size {} is smaller than the {} ranks: every rank needs a sample", cfg.batch_size,
                       cfg.world_size);
  if (cfg.steps < 1) return fmt::format("steps must be at least 1, got {}", cfg.steps);
  if (cfg.optimizer.kind != "sgd" && cfg.optimizer.kind != "adamw")
    return fmt::format("optimizer \"{}\" is unknown (sgd or adamw)", cfg.optimizer.kind);
  if (cfg.threads < 1) return fmt::format("threads must be at least 1, got {}", cfg.threads);
  if (cfg.checkpoint_every < 0) return std::string("checkpoint_every must not be negative");
  if (cfg.checkpoint_every > 0 && cfg.checkpoint_dir.empty()) return std::string("checkpoints need a directory");
  if (cfg.world_size > 1 && cfg.store.empty()) return std::string("more than one rank needs a rendezvous store");
  if (cfg.device != "cpu" && cfg.device != "cuda")
    return fmt::format("device \"{}\" is unknown (cpu or cuda)", cfg.device);
  if (cfg.backend != "gloo" && cfg.backend != "nccl")
    return fmt::format("backend \"{}\" is unknown (gloo or nccl)", cfg.backend);
  if (cfg.backend == "nccl" && cfg.device != "cuda") return std::string("backend nccl needs device cuda");
  if (cfg.device == "cuda" && cfg.backend != "nccl" && cfg.world_size > 1)
    return std::string("device cuda with more than one rank needs backend nccl (gloo reduces host buffers)");
  if (cfg.watchdog.count() < 0) return std::string("the watchdog must not be negative");
  if (cfg.sdc_check_every < 0) return std::string("sdc_check_every must not be negative");
  if (!cfg.parallel.hybrid()) return std::nullopt;
  if (cfg.device != "cpu") return std::string("tp or pp above 1 runs on the cpu device only");
  if (cfg.recovery == RecoveryMode::kElastic)
    return std::string("elastic recovery is not available with tp or pp above 1: use restart");
  if (cfg.parallel.schedule != "gpipe" && cfg.parallel.schedule != "1f1b")
    return fmt::format("schedule \"{}\" is unknown (gpipe or 1f1b)", cfg.parallel.schedule);
  if (auto e = parallel_error(cfg.layers, cfg.batch_size, cfg.world_size, parallel_dims(cfg), cfg.parallel.microbatches))
    return fmt::format("parallel{}: {}", e->key.empty() ? "" : "." + e->key, e->message);
  return std::nullopt;
}

CheckpointConfig checkpoint_config(const TrainConfig& cfg, const std::string& dir) {
  CheckpointConfig c;
  c.dir = dir;
  c.incremental = cfg.checkpoint_incremental;
  c.full_every = cfg.checkpoint_full_every;
  c.async = cfg.checkpoint_async;
  return c;
}

ParallelDims parallel_dims(const TrainConfig& cfg) {
  const auto& p = cfg.parallel;
  const int per_replica = std::max(1, p.tp) * std::max(1, p.pp);
  return {p.tp, p.pp, p.dp > 0 ? p.dp : std::max(1, cfg.world_size / per_replica)};
}

TrainConfig train_config(const TrainSettings& s) {
  TrainConfig cfg;
  cfg.layers = s.layers;
  cfg.batch_size = s.batch_size;
  cfg.steps = s.steps;
  cfg.target_loss = s.target_loss;
  cfg.optimizer = OptimizerConfig{.kind = s.optimizer, .lr = s.lr, .momentum = s.momentum,
                                  .weight_decay = s.weight_decay, .beta1 = s.beta1, .beta2 = s.beta2, .eps = s.eps};
  cfg.bucket_bytes = s.bucket_size.bytes;
  cfg.algorithm = s.algorithm == "ring"       ? AllreduceAlgorithm::kRing
                  : s.algorithm == "tcp_ring" ? AllreduceAlgorithm::kTcpRing
                                              : AllreduceAlgorithm::kBcube;
  cfg.threads = s.threads;
  cfg.device = s.device;
  cfg.backend = s.backend;
  cfg.checkpoint_dir = s.checkpoint.dir;
  cfg.checkpoint_every = s.checkpoint.every_steps;
  cfg.checkpoint_incremental = s.checkpoint.incremental;
  cfg.checkpoint_full_every = s.checkpoint.full_every;
  cfg.checkpoint_async = s.checkpoint.async;
  cfg.recovery = s.recovery.mode;
  cfg.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(s.timeout.value);
  cfg.sdc_check_every = s.sdc_check_every.value_or(kDefaultSdcCheckEvery);
  cfg.parallel = s.parallel;
  return cfg;
}

}  // namespace chaosbench::bench::train

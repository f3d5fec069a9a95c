#include "bench/train/train_config.h"

#include <fmt/format.h>

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
  return std::nullopt;
}

const char* to_string(RecoveryMode m) {
  switch (m) {
    case RecoveryMode::kRestart: return "restart";
    case RecoveryMode::kElastic: return "elastic";
    case RecoveryMode::kNone: break;
  }
  return "none";
}

}  // namespace chaosbench::bench::train

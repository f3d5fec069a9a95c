// workload kind "train" (the built-in data-parallel trainer) and the "recovery" block it
// shares with the command workload. docs/scenario-format.md describes every key.
#include <fmt/format.h>

#include "harness/scenario/scenario_parts.h"

namespace chaosbench::harness {
namespace {

// One trainer rank per gloo pair of ports, as for the collective (workload_parser.cc).
constexpr int kMaxTrainRanks = 64;
constexpr int kMaxLayerWidth = 1 << 16;

void parse_model(ParseContext& ctx, const json& value, TrainWorkload& w) {
  ObjectReader r(ctx, value, "workload.model", {"layers"});
  const json* layers = r.raw("layers");
  if (!layers) return;
  const std::string path = r.path_of("layers");
  if (!layers->is_array() || layers->size() < 2) {
    ctx.error(path, fmt::format("expected an array of at least two layer widths (input first, output last), got {}",
                                describe(*layers)));
    return;
  }
  std::vector<int> widths;
  for (std::size_t i = 0; i < layers->size(); ++i)
    if (auto v = read_integer(ctx, (*layers)[i], join_path(path, i), 1, kMaxLayerWidth))
      widths.push_back(static_cast<int>(*v));
  if (widths.size() == layers->size()) w.layers = widths;
}

void parse_optimizer(ParseContext& ctx, const json& value, TrainWorkload& w) {
  ObjectReader r(ctx, value, "workload.optimizer", {"kind", "lr", "momentum", "weight_decay", "beta1", "beta2", "eps"});
  if (auto v = r.choice("kind", {"sgd", "adamw"})) w.optimizer = *v;
  auto positive = [&](const char* key, float& out, double max) {
    if (auto v = r.number(key)) {
      // The trainer computes in float: a value float rounds to 0 is no positive rate.
      if (!(*v > 0 && *v <= max && static_cast<float>(*v) > 0))
        ctx.error(r.path_of(key), fmt::format("expected a number in (0, {}], got {}", max, *v));
      else out = static_cast<float>(*v);
    }
  };
  auto fraction = [&](const char* key, float& out) {
    if (auto v = r.number(key)) {
      if (!(*v >= 0 && *v < 1)) ctx.error(r.path_of(key), fmt::format("expected a number in [0, 1), got {}", *v));
      else out = static_cast<float>(*v);
    }
  };
  positive("lr", w.lr, 10);
  fraction("momentum", w.momentum);
  fraction("weight_decay", w.weight_decay);
  fraction("beta1", w.beta1);
  fraction("beta2", w.beta2);
  positive("eps", w.eps, 1);
}

void parse_checkpoint(ParseContext& ctx, const json& value, TrainWorkload& w) {
  ObjectReader r(ctx, value, "workload.checkpoint", {"every_steps", "mode", "full_every", "async", "dir"});
  r.require("every_steps", "steps between checkpoints, such as 50");
  if (auto v = r.integer("every_steps", 1, 1000000000)) w.checkpoint.every_steps = static_cast<int>(*v);
  if (auto v = r.choice("mode", {"incremental", "full"})) w.checkpoint.incremental = *v == "incremental";
  if (auto v = r.integer("full_every", 1, 1000)) w.checkpoint.full_every = static_cast<int>(*v);
  if (auto v = r.boolean("async")) w.checkpoint.async = *v;
  if (auto v = r.string("dir")) {
    if (v->empty()) ctx.error(r.path_of("dir"), "expected a directory, got an empty string");
    w.checkpoint.dir = *v;
  }
}

}  // namespace

RecoverySpec parse_recovery(ParseContext& ctx, const json& value, const ClusterSpec& cluster, bool elastic_allowed) {
  RecoverySpec spec;
  ObjectReader r(ctx, value, "workload.recovery", {"mode", "max_restarts", "min_nodes", "hang_timeout"});
  std::vector<std::string_view> modes{"none", "restart"};
  if (elastic_allowed) modes.push_back("elastic");
  if (auto v = r.choice("mode", modes)) spec.mode = bench::train::parse_recovery_mode(*v).value_or(RecoveryMode::kNone);
  if (auto v = r.integer("max_restarts", 0, 1000)) spec.max_restarts = static_cast<int>(*v);
  if (auto v = r.integer("min_nodes", 1, std::max(1, cluster.nodes))) spec.min_nodes = static_cast<int>(*v);
  if (auto v = r.duration("hang_timeout", /*allow_zero=*/false)) spec.hang_timeout = *v;
  return spec;
}

TrainWorkload parse_train(ParseContext& ctx, const json& value, const ClusterSpec& cluster) {
  TrainWorkload w;
  ObjectReader r(ctx, value, "workload",
                 {"kind", "backend", "device", "model", "batch_size", "steps", "optimizer", "bucket_size", "algorithm", "threads", "target_loss",
                  "checkpoint", "recovery", "timeout", "sdc_check_every", "parallel"});
  const json* parallel = r.raw("parallel");
  if (parallel) parse_parallel(ctx, *parallel, w);
  if (auto v = r.choice("backend", {"gloo", "nccl"})) w.backend = *v;
  if (auto v = r.choice("device", {"cpu", "cuda"})) w.device = *v;
  if (w.backend == "nccl" && w.device != "cuda")
    ctx.error(r.path_of("backend"), "backend \"nccl\" needs \"device\": \"cuda\"");
  if (auto why = hybrid_device_refusal(w); !why.empty())
    ctx.error(r.path_of("device"), why);
  else if (w.device == "cuda" && w.backend != "nccl" && cluster.world_size() > 1)
    ctx.error(r.path_of("device"), "device \"cuda\" with more than one rank needs \"backend\": \"nccl\" (gloo reduces "
                                   "host buffers)");
  if (const json* m = r.raw("model")) parse_model(ctx, *m, w);
  if (auto v = r.integer("batch_size", 1, 1 << 20)) w.batch_size = static_cast<int>(*v);
  if (auto v = r.integer("steps", 1, 100000000)) w.steps = *v;
  if (const json* o = r.raw("optimizer")) parse_optimizer(ctx, *o, w);
  if (auto v = r.size("bucket_size")) {
    if (v->bytes < 4) ctx.error(r.path_of("bucket_size"), "expected at least 4B (one float)");
    else w.bucket_size = *v;
  }
  if (auto v = r.choice("algorithm", {"bcube", "ring", "tcp_ring"})) w.algorithm = *v;
  if (auto v = r.integer("threads", 1, 256)) w.threads = static_cast<int>(*v);
  if (auto v = r.number("target_loss")) {
    if (!(*v > 0)) ctx.error(r.path_of("target_loss"), fmt::format("expected a positive number, got {}", *v));
    else w.target_loss = *v;
  }
  if (auto v = r.integer("sdc_check_every", 0, 1000000)) w.sdc_check_every = static_cast<int>(*v);
  if (const json* c = r.raw("checkpoint")) parse_checkpoint(ctx, *c, w);
  if (const json* c = r.raw("recovery")) w.recovery = parse_recovery(ctx, *c, cluster, /*elastic_allowed=*/true);
  if (auto v = r.duration("timeout", /*allow_zero=*/false)) {
    if (v->value < std::chrono::milliseconds(10))
      ctx.error(r.path_of("timeout"), fmt::format("expected at least 10ms, got {}", common::to_string(*v)));
    else w.timeout = *v;
  }
  const bool cluster_ok = !ctx.failed_under("cluster");
  if (cluster_ok && cluster.world_size() > kMaxTrainRanks)
    ctx.error("cluster", fmt::format("the train workload runs at most {} ranks on one machine; this cluster has {}",
                                     kMaxTrainRanks, cluster.world_size()));
  else if (cluster_ok && !parallel && w.batch_size < cluster.world_size())
    ctx.error(r.path_of("batch_size"), fmt::format("batch_size {} is smaller than the {} ranks: every rank needs a sample",
                                                    w.batch_size, cluster.world_size()));
  // A parallel block is checked as a whole: the batch splits over dp replicas, not ranks
  // (quiet about what follows from a cluster that failed above).
  if (parallel) check_parallel(ctx, w, cluster);
  if (!cluster_ok) return w;
  if (w.recovery.mode == RecoveryMode::kRestart && w.checkpoint.every_steps == 0)
    ctx.warning("workload.recovery", "restart recovery without workload.checkpoint starts every restart from step 0");
  return w;
}

}  // namespace chaosbench::harness

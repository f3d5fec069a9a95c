// Hybrid parallelism in a scenario (issue 20): the train workload's "parallel" block, its
// consistency with the model, batch and cluster (bench/train/stage_plan.h's one check),
// and what a hybrid layout cannot run with yet. docs/scenario-format.md describes them.
#include <fmt/format.h>

#include "bench/train/stage_plan.h"
#include "harness/scenario/scenario_parts.h"

namespace chaosbench::harness {
namespace {

using bench::train::ParallelDims;

constexpr int kMaxParallelSize = 64;  // the train workload's most ranks (train_workload_parser.cc)

std::string layout_name(const TrainWorkload::Parallel& p) { return fmt::format("tp {}, pp {}", p.tp, p.pp); }

}  // namespace

void parse_parallel(ParseContext& ctx, const json& value, TrainWorkload& w) {
  ObjectReader r(ctx, value, "workload.parallel", {"tp", "pp", "dp", "microbatches", "schedule"});
  auto& p = w.parallel;
  if (auto v = r.integer("tp", 1, kMaxParallelSize)) p.tp = static_cast<int>(*v);
  if (auto v = r.integer("pp", 1, kMaxParallelSize)) p.pp = static_cast<int>(*v);
  if (auto v = r.integer("dp", 1, kMaxParallelSize)) p.dp = static_cast<int>(*v);
  if (auto v = r.integer("microbatches", 1, 1 << 20)) p.microbatches = static_cast<int>(*v);
  if (auto v = r.choice("schedule", {"gpipe", "1f1b"})) p.schedule = *v;
}

std::string hybrid_device_refusal(const TrainWorkload& w) {
  if (!w.parallel.hybrid() || w.device != "cuda") return "";
  return fmt::format("device \"cuda\" is data-parallel only for now: with {} the pipeline's sends and the TP "
                     "allreduces run on gloo host buffers; use device \"cpu\"", layout_name(w.parallel));
}

void check_parallel(ParseContext& ctx, const TrainWorkload& w, const ClusterSpec& cluster) {
  const auto& p = w.parallel;
  if (p.hybrid() && w.recovery.mode == RecoveryMode::kElastic)
    ctx.error("workload.recovery.mode",
              fmt::format("elastic recovery does not work with a hybrid layout ({}): a rank lost from a pipeline "
                          "leaves its replica without a stage or a TP shard, and re-forming only that data-parallel "
                          "replica is not implemented; use \"restart\"", layout_name(p)));
  if (p.hybrid() && w.sdc_check_every.value_or(0) > 0)
    ctx.error("workload.sdc_check_every",
              fmt::format("the replica check compares whole replicas, which a hybrid layout ({}) splits over stages "
                          "and TP shards: set 0 or leave it out", layout_name(p)));
  // Derived from the cluster, the model and the batch: quiet where those already failed.
  if (ctx.failed_under("cluster") || ctx.failed_under("workload.parallel")) return;
  const int world = cluster.world_size();
  if (p.dp == 0 && world % (p.tp * p.pp) != 0) {
    ctx.error("workload.parallel", fmt::format("dp defaults to world / (tp × pp), but the cluster's {} ranks (nodes × "
                                               "ranks_per_node) are not a multiple of tp {} × pp {} = {}",
                                               world, p.tp, p.pp, p.tp * p.pp));
    return;
  }
  const ParallelDims dims{p.tp, p.pp, p.dp > 0 ? p.dp : world / (p.tp * p.pp)};
  auto e = bench::train::parallel_error(w.layers, w.batch_size, world, dims, p.microbatches);
  if (!e) return;
  // The block's own errors (key "": the world) hold whatever the model and batch are.
  if (!e->key.empty() && (ctx.failed_under("workload.model") || ctx.failed_under("workload.batch_size"))) return;
  ctx.error(e->key.empty() ? std::string("workload.parallel") : join_path("workload.parallel", e->key), e->message);
}

}  // namespace chaosbench::harness

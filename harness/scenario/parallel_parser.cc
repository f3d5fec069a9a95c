// Hybrid parallelism in a scenario: the train workload's "parallel" block, its
// consistency with the model, batch and cluster (bench/train/hybrid/stage_plan.h's one check),
// what a hybrid layout cannot run with yet, and the fault targets that name its groups
// ({"pp_stage":[..]}, {"tp_group":[..]}, {"dp_replica":[..]}), resolved here into ranks
// or nodes through bench/train/hybrid/parallel_layout.h. docs/scenario-format.md describes them.
#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/train/hybrid/parallel_layout.h"
#include "bench/train/hybrid/stage_plan.h"
#include "harness/scenario/scenario_parts.h"

namespace chaosbench::harness {
namespace {

using bench::train::ParallelDims;
using bench::train::ParallelLayout;
using faults::TargetForm;

constexpr int kMaxParallelSize = 64;  // the train workload's most ranks (train_workload_parser.cc)

std::string layout_name(const TrainWorkload::Parallel& p) { return fmt::format("tp {}, pp {}", p.tp, p.pp); }

// The layout's sizes with dp resolved, or nullopt when the world does not fit them.
std::optional<ParallelDims> resolved_dims(const TrainWorkload::Parallel& p, int world) {
  const int per_replica = p.tp * p.pp;
  const int dp = p.dp > 0 ? p.dp : world / per_replica;
  ParallelDims d{p.tp, p.pp, dp};
  if (dp < 1 || d.world() != world) return std::nullopt;
  return d;
}

// One kind of group target: how many groups the layout has, one group's ranks, and the
// range there is, for messages.
struct GroupKind {
  std::string_view form;
  int (*count)(const ParallelLayout&);
  std::vector<int> (ParallelLayout::*ranks)(int) const;
  const char* range;  // "{}" is the last index
};

const GroupKind* group_kind(std::string_view form) {
  static const GroupKind kKinds[] = {
      {"pp_stage", [](const ParallelLayout& l) { return l.dims().pp; }, &ParallelLayout::stage_ranks,
       "the pipeline has stages 0..{}"},
      {"tp_group", [](const ParallelLayout& l) { return l.tp_groups(); }, &ParallelLayout::tp_group_ranks,
       "the TP groups are 0..{} (numbered dp_rank + dp × pp_stage)"},
      {"dp_replica", [](const ParallelLayout& l) { return l.dims().dp; }, &ParallelLayout::replica_ranks,
       "the data-parallel replicas are 0..{}"},
  };
  for (const auto& k : kKinds)
    if (k.form == form) return &k;
  return nullptr;
}

// Nodes holding `ranks` (rank r runs on node r / ranks_per_node: the launcher starts the
// train workload's ranks node by node), with a warning naming any other rank they hold.
std::vector<int> nodes_of(ParseContext& ctx, const std::string& path, const std::vector<int>& ranks,
                          const ClusterSpec& cluster, std::string_view type) {
  std::vector<int> nodes, others;
  for (int r : ranks) {
    const int n = r / cluster.ranks_per_node;
    if (std::find(nodes.begin(), nodes.end(), n) == nodes.end()) nodes.push_back(n);
  }
  for (int n : nodes)
    for (int r = n * cluster.ranks_per_node; r < (n + 1) * cluster.ranks_per_node; ++r)
      if (std::find(ranks.begin(), ranks.end(), r) == ranks.end()) others.push_back(r);
  if (!others.empty())
    ctx.warning(path, fmt::format("{} acts on whole nodes: node(s) {} hold the target's ranks {} but also ranks {}, "
                                  "which the fault hits too",
                                  type, fmt::join(nodes, ", "), fmt::join(ranks, ", "), fmt::join(others, ", ")));
  return nodes;
}

// A non-empty array of distinct group indices below `count`; one out of range is named
// with the range there is (`range`'s "{}" is the last index).
std::optional<std::vector<int>> read_group_indices(ParseContext& ctx, const json& v, const std::string& path,
                                                   std::string_view form, int count, const char* range) {
  const std::string last = fmt::format(fmt::runtime(range), count - 1);
  if (!v.is_array() || v.empty()) {
    ctx.error(path, fmt::format("expected a non-empty array of {} indices ({}), got {}", form, last,
                                v.is_array() ? "an empty array" : describe(v)));
    return std::nullopt;
  }
  std::vector<int> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string p = join_path(path, i);
    if (v[i].is_number_integer() && (v[i].get<std::int64_t>() < 0 || v[i].get<std::int64_t>() >= count)) {
      ctx.error(p, fmt::format("{} {} does not exist: {}", form, v[i].get<std::int64_t>(), last));
      return std::nullopt;
    }
    auto g = read_integer(ctx, v[i], p, 0, count - 1);
    if (!g) return std::nullopt;
    if (std::find(out.begin(), out.end(), static_cast<int>(*g)) != out.end()) {
      ctx.error(p, fmt::format("{} {} is listed twice", form, *g));
      return std::nullopt;
    }
    out.push_back(static_cast<int>(*g));
  }
  return out;
}

}  // namespace

const std::vector<std::string_view>& group_target_forms() {
  static const std::vector<std::string_view> kForms{"pp_stage", "tp_group", "dp_replica"};
  return kForms;
}

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
  return fmt::format("device \"cuda\" is data-parallel only for now: with {} the pipeline's messages and the TP "
                     "allreduces run on host buffers over TCP; use device \"cpu\"", layout_name(w.parallel));
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

std::string parallel_fault_refusal(std::string_view type, const WorkloadSpec* workload) {
  const auto* train = workload ? std::get_if<TrainWorkload>(workload) : nullptr;
  if (!train || !train->parallel.hybrid() || type != "gpu.bitflip") return "";
  return fmt::format("gpu.bitflip is found by the replica check, which compares whole replicas; a hybrid layout "
                     "({}) splits a replica over stages and TP shards", layout_name(train->parallel));
}

std::optional<TargetSpec> parse_group_target(ParseContext& ctx, std::string_view form, const json& value,
                                             const std::string& path, const GroupTargetContext& c) {
  const auto* train = c.workload ? std::get_if<TrainWorkload>(c.workload) : nullptr;
  if (!train) {
    // A workload that failed may not be the kind it meant to be: say nothing more then.
    if (!c.workload || ctx.failed_under("workload")) return std::nullopt;
    ctx.error(path, fmt::format("\"{}\" targets name groups of a train workload's parallel layout "
                                "(workload.parallel); this workload is {}", form, workload_kind(*c.workload)),
              true);
    return std::nullopt;
  }
  // Without a layout that fits the cluster no target resolves; the workload's (or the
  // cluster's) own error says why.
  if (ctx.failed_under("cluster") || ctx.failed_under("workload.parallel")) return std::nullopt;
  auto dims = resolved_dims(train->parallel, c.cluster.world_size());
  if (!dims) {
    ctx.error(path, "the train workload's parallel layout does not fit the cluster", true);
    return std::nullopt;
  }
  const ParallelLayout layout(*dims);
  const GroupKind& kind = *group_kind(form);
  auto indices = read_group_indices(ctx, value, path, form, kind.count(layout), kind.range);
  if (!indices) return std::nullopt;
  std::vector<int> ranks;
  for (int g : *indices)
    for (int r : (layout.*kind.ranks)(g)) ranks.push_back(r);
  std::sort(ranks.begin(), ranks.end());
  TargetSpec t;
  if (faults::accepts(c.accepted, TargetForm::kRanks)) {
    t.form = TargetForm::kRanks;
    t.indices = ranks;
  } else if (faults::accepts(c.accepted, TargetForm::kNodes)) {
    t.form = TargetForm::kNodes;
    t.indices = nodes_of(ctx, path, ranks, c.cluster, c.type);
  } else {
    ctx.error(path, fmt::format("{} takes neither ranks nor nodes, so \"{}\" cannot name its target (it accepts: {})",
                                c.type, form, fmt::join(c.accepted_names, ", ")),
              true);
    return std::nullopt;
  }
  return t;
}

}  // namespace chaosbench::harness

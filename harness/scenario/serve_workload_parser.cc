// workload kind "serve": KServe v2 replicas of the trainer's MLP and the open-loop load
// generator driving them. docs/scenario-format.md describes every key.
#include <algorithm>

#include <fmt/format.h>

#include "harness/scenario/scenario_parts.h"

namespace chaosbench::harness {
namespace {

constexpr int kMaxWidth = 1 << 16;

std::optional<std::vector<int>> positive_ints(ParseContext& ctx, const json& v, const std::string& path, int max) {
  if (!v.is_array() || v.empty()) {
    ctx.error(path, fmt::format("expected a non-empty array of integers, got {}", describe(v)));
    return std::nullopt;
  }
  std::vector<int> out;
  for (std::size_t i = 0; i < v.size(); ++i)
    if (auto x = read_integer(ctx, v[i], join_path(path, i), 1, max)) out.push_back(static_cast<int>(*x));
  if (out.size() != v.size()) return std::nullopt;
  return out;
}

void parse_load(ParseContext& ctx, const json& value, const ClusterSpec& cluster, LoadSpec& l) {
  ObjectReader r(ctx, value, "workload.load",
                 {"node", "scenario", "qps", "duration", "rows", "connections", "timeout", "window"});
  if (auto v = r.integer("node", 0, std::max(0, cluster.nodes - 1))) l.node = static_cast<int>(*v);
  if (auto v = r.choice("scenario", {"server", "offline", "single-stream"}))
    l.scenario = bench::load::parse_load_scenario(*v).value_or(bench::load::LoadScenario::kServer);
  if (auto v = r.number("qps")) {
    if (!(*v > 0 && *v <= 1e6)) ctx.error(r.path_of("qps"), fmt::format("expected a rate in (0, 1e6], got {}", *v));
    else l.qps = *v;
  }
  if (auto v = r.duration("duration", /*allow_zero=*/false)) l.duration = *v;
  if (auto v = r.integer("rows", 1, 4096)) l.rows = static_cast<int>(*v);
  if (auto v = r.integer("connections", 1, 1024)) l.connections = static_cast<int>(*v);
  if (auto v = r.duration("timeout", /*allow_zero=*/false)) l.timeout = *v;
  if (auto v = r.duration("window", /*allow_zero=*/false)) {
    if (v->value < std::chrono::milliseconds(100)) ctx.error(r.path_of("window"), "expected a duration of at least 100ms");
    else l.window = *v;
  }
}

}  // namespace

ServeWorkload parse_serve(ParseContext& ctx, const json& value, const ClusterSpec& cluster) {
  ServeWorkload w;
  ObjectReader r(ctx, value, "workload",
                 {"kind", "model_name", "model", "dtype", "replicas", "port", "batching", "queue_limit",
                  "checkpoint_dir", "load"});
  if (auto v = r.string("model_name")) {
    if (!valid_name(*v)) ctx.error(r.path_of("model_name"), "expected 1 to 64 of a-z 0-9 . _ -");
    w.model_name = *v;
  }
  if (const json* m = r.raw("model")) {
    ObjectReader mr(ctx, *m, "workload.model", {"layers"});
    if (const json* layers = mr.raw("layers")) {
      if (auto v = positive_ints(ctx, *layers, mr.path_of("layers"), kMaxWidth)) {
        if (v->size() < 2) ctx.error(mr.path_of("layers"), "expected at least two layer widths (input first, output last)");
        else w.layers = *v;
      }
    }
  }
  if (auto v = r.choice("dtype", {"fp32", "int8"})) w.dtype = *v;
  if (const json* v = r.raw("replicas")) {
    if (auto nodes = read_index_list(ctx, *v, r.path_of("replicas"), cluster.nodes, "node")) w.replicas = *nodes;
  }
  if (auto v = r.integer("port", 1024, 65535)) w.port = static_cast<int>(*v);
  if (const json* b = r.raw("batching")) {
    ObjectReader br(ctx, *b, "workload.batching", {"max_batch_size", "max_queue_delay", "preferred_batch_sizes"});
    if (auto v = br.integer("max_batch_size", 1, 4096)) w.batching.max_batch_size = static_cast<int>(*v);
    if (auto v = br.duration("max_queue_delay")) w.batching.max_queue_delay = *v;
    if (const json* p = br.raw("preferred_batch_sizes"))
      if (auto v = positive_ints(ctx, *p, br.path_of("preferred_batch_sizes"), 4096)) w.batching.preferred_batch_sizes = *v;
  }
  if (auto v = r.integer("queue_limit", 1, 1000000)) w.queue_limit = static_cast<int>(*v);
  if (auto v = r.string("checkpoint_dir")) w.checkpoint_dir = *v;
  if (const json* l = r.raw("load")) parse_load(ctx, *l, cluster, w.load);
  if (ctx.failed_under("cluster")) return w;
  const int load_node = w.load.node >= 0 ? w.load.node : cluster.nodes - 1;
  if (cluster.nodes < 2) {
    ctx.error("cluster", "the serve workload needs at least 2 nodes: replicas and a node for the load generator");
    return w;
  }
  if (std::find(w.replicas.begin(), w.replicas.end(), load_node) != w.replicas.end())
    ctx.error(r.path_of("replicas"), fmt::format("node {} runs the load generator; replicas go on other nodes", load_node));
  if (cluster.ranks_per_node != 1)
    ctx.error("cluster.ranks_per_node", "the serve workload runs one process per node: set ranks_per_node to 1");
  return w;
}

}  // namespace chaosbench::harness

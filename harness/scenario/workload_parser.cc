// workload: one parser per kind, each filling its workload's settings type
// (bench/<kind>/<kind>_settings.h; scenario.h says which struct holds it). A new workload
// kind is that type, a branch here, and its launch (harness/plan/workload_launcher.cc).
#include <fmt/format.h>

#include "bench/collective/collective_kind.h"
#include "harness/scenario/placeholders.h"
#include "harness/scenario/scenario_parts.h"
#include "harness/scenario/suggest.h"

namespace chaosbench::harness {
namespace {

const std::vector<std::string_view> kWorkloadKinds{"collective", "command", "train", "serve", "llm"};

// A gloo full mesh opens a listening port per peer pair; on one loopback address more
// than this many ranks run out of ports (256 ranks failed with EADDRINUSE here).
constexpr int kMaxCollectiveRanks = 64;
// gloo's older algorithms count bytes in an int.
constexpr std::uint64_t kMaxMessageBytes = 2147483647;

CollectiveWorkload parse_collective(ParseContext& ctx, const json& value, const ClusterSpec& cluster) {
  CollectiveWorkload w;
  ObjectReader r(ctx, value, "workload",
                 {"kind", "backend", "collectives", "algorithms", "sizes", "warmup_iters", "iters", "duration", "check", "timeout"});
  if (auto v = r.choice("backend", {"gloo"})) w.backend = *v;
  std::vector<std::string_view> names;
  for (const auto& c : bench::collective_table()) names.push_back(c.name);
  if (auto v = r.choice_list("collectives", names)) w.collectives = *v;
  const auto* allreduce = bench::find_collective("allreduce");
  std::vector<std::string_view> algos(allreduce->algorithms.begin(), allreduce->algorithms.end());
  if (auto v = r.choice_list("algorithms", algos)) w.algorithms = *v;
  if (const json* sizes = r.raw("sizes")) {
    ObjectReader s(ctx, *sizes, "workload.sizes", {"min", "max", "factor"});
    if (auto v = s.size("min")) w.min_size = *v;
    if (auto v = s.size("max")) w.max_size = *v;
    if (auto v = s.integer("factor", 2, 1024)) w.factor = static_cast<std::uint64_t>(*v);
    if (w.min_size.bytes < 4) ctx.error("workload.sizes.min", "expected at least 4B (one float element)");
    if (w.max_size.bytes > kMaxMessageBytes)
      ctx.error("workload.sizes.max", fmt::format("expected less than 2GiB per message (gloo counts bytes in an int), "
                                                  "got {}", common::to_string(w.max_size)));
    if (w.min_size > w.max_size)
      ctx.error("workload.sizes", fmt::format("min ({}) is larger than max ({})", common::to_string(w.min_size),
                                              common::to_string(w.max_size)));
  }
  if (auto v = r.integer("warmup_iters", 0, 10000)) w.warmup_iters = static_cast<int>(*v);
  if (auto v = r.integer("iters", 1, 100000)) w.iters = static_cast<int>(*v);
  if (auto v = r.duration("duration", /*allow_zero=*/false)) w.duration = *v;
  if (auto v = r.boolean("check")) w.check = *v;
  if (auto v = r.duration("timeout", /*allow_zero=*/false)) {
    if (v->value < std::chrono::milliseconds(1))
      ctx.error(r.path_of("timeout"), fmt::format("expected at least 1ms, got {}", common::to_string(*v)));
    w.timeout = *v;
  }
  if (ctx.failed_under("cluster")) return w;  // the cluster's own error says it all
  if (cluster.world_size() < 2)
    ctx.error("cluster", "a collective needs at least 2 ranks: set nodes or ranks_per_node so that nodes x "
                         "ranks_per_node >= 2");
  if (cluster.world_size() > kMaxCollectiveRanks)
    ctx.error("cluster", fmt::format("the collective workload runs at most {} ranks on one machine (gloo's full "
                                     "mesh needs a port per rank pair); this cluster has {}",
                                     kMaxCollectiveRanks, cluster.world_size()));
  return w;
}

CommandWorkload parse_command(ParseContext& ctx, const json& value, const ClusterSpec& cluster) {
  CommandWorkload w;
  ObjectReader r(ctx, value, "workload", {"kind", "argv", "nodes", "env", "cwd", "master_port", "recovery"});
  r.require("argv", "the program and its arguments, such as [\"python3\", \"train.py\"]");
  if (const json* argv = r.raw("argv"))
    w.argv = read_argv(ctx, *argv, r.path_of("argv"),
                       [&](std::string_view a) { return check_placeholders(a, cluster.nodes); });
  if (const json* nodes = r.raw("nodes")) {
    if (auto v = read_index_list(ctx, *nodes, r.path_of("nodes"), cluster.nodes, "node")) w.nodes = *v;
  }
  if (const json* env = r.raw("env")) {
    if (!env->is_object()) {
      ctx.error(r.path_of("env"), fmt::format("expected an object of strings, got {}", describe(*env)));
    } else {
      for (const auto& [k, v] : env->items()) {
        std::string p = join_path(r.path_of("env"), k);
        if (k.empty() || k.find_first_of(std::string_view("=\0", 2)) != std::string::npos)
          ctx.error(p, "expected a variable name without '=' or NUL", true);
        else if (!v.is_string()) ctx.error(p, fmt::format("expected a string, got {}", describe(v)));
        else if (auto bad = check_placeholders(v.get_ref<const std::string&>(), cluster.nodes)) ctx.error(p, *bad);
        else w.env[k] = v.get<std::string>();
      }
    }
  }
  if (auto v = r.string("cwd")) {
    if (auto bad = check_placeholders(*v, cluster.nodes)) ctx.error(r.path_of("cwd"), *bad);
    w.cwd = *v;
  }
  if (auto v = r.integer("master_port", 1024, 65535)) w.master_port = static_cast<int>(*v);
  if (const json* c = r.raw("recovery")) w.recovery = parse_recovery(ctx, *c, cluster, /*elastic_allowed=*/false);
  return w;
}

}  // namespace

std::vector<std::string> read_argv(ParseContext& ctx, const json& v, const std::string& path,
                                   const std::function<std::optional<std::string>(std::string_view)>& placeholder_problem) {
  std::vector<std::string> argv;
  if (!v.is_array() || v.empty()) {
    ctx.error(path, fmt::format("expected a non-empty array of strings, got {}", v.is_array() ? "an empty array" : describe(v)));
    return argv;
  }
  for (std::size_t i = 0; i < v.size(); ++i) {
    const json& a = v[i];
    if (!a.is_string()) {
      ctx.error(join_path(path, i), fmt::format("expected a string, got {}", describe(a)));
      continue;
    }
    if (auto bad = placeholder_problem(a.get_ref<const std::string&>())) ctx.error(join_path(path, i), *bad);
    argv.push_back(a.get<std::string>());
  }
  if (!argv.empty() && argv.front().empty()) ctx.error(join_path(path, 0), "the program name is empty");
  return argv;
}

bool has_fault_with(const Scenario& scenario, faults::FaultTrait trait) {
  for (const auto& f : scenario.faults)
    if (faults::fault_has_trait(f.type, trait)) return true;
  return false;
}

std::string_view workload_kind(const WorkloadSpec& w) {
  if (std::holds_alternative<CollectiveWorkload>(w)) return "collective";
  if (std::holds_alternative<ServeWorkload>(w)) return "serve";
  if (std::holds_alternative<LlmWorkload>(w)) return "llm";
  return std::holds_alternative<TrainWorkload>(w) ? "train" : "command";
}

RecoverySpec workload_recovery(const WorkloadSpec& w) {
  if (const auto* t = std::get_if<TrainWorkload>(&w)) return t->recovery;
  if (const auto* c = std::get_if<CommandWorkload>(&w)) return c->recovery;
  return {};
}

WorkloadSpec parse_workload(ParseContext& ctx, const json& value, const ClusterSpec& cluster) {
  if (!value.is_object()) {
    ctx.error("workload", fmt::format("expected an object with \"kind\", got {}", describe(value)));
    return CollectiveWorkload{};
  }
  auto kind_it = value.find("kind");
  if (kind_it == value.end()) {
    ctx.error("workload", "missing required key \"kind\" (\"collective\", \"train\", \"serve\", \"llm\" or \"command\")");
    return CollectiveWorkload{};
  }
  if (!kind_it->is_string()) {
    ctx.error("workload.kind", fmt::format("expected a string, got {}", describe(*kind_it)));
    return CollectiveWorkload{};
  }
  const auto& kind = kind_it->get_ref<const std::string&>();
  if (kind == "collective") return parse_collective(ctx, value, cluster);
  if (kind == "command") return parse_command(ctx, value, cluster);
  if (kind == "train") return parse_train(ctx, value, cluster);
  if (kind == "serve") return parse_serve(ctx, value, cluster);
  if (kind == "llm") return parse_llm(ctx, value, cluster);
  std::string later = kind == "load"
                          ? fmt::format(" (\"{}\" is not available in this version)", kind)
                          : suggestion_suffix(kind, kWorkloadKinds);
  ctx.error("workload.kind",
            fmt::format("expected \"collective\", \"train\", \"serve\", \"llm\" or \"command\", got \"{}\"{}", kind, later));
  return CollectiveWorkload{};
}

std::optional<std::vector<int>> read_index_list(ParseContext& ctx, const json& v, const std::string& path, int limit,
                                                std::string_view what, bool allow_empty) {
  if (!v.is_array() || (v.empty() && !allow_empty)) {
    ctx.error(path, fmt::format("expected a non-empty array of {} indices (0 to {}), got {}", what, limit - 1,
                                v.is_array() ? "an empty array" : describe(v)));
    return std::nullopt;
  }
  std::vector<int> out;
  bool good = true;
  for (std::size_t i = 0; i < v.size(); ++i) {
    auto idx = read_integer(ctx, v[i], join_path(path, i), 0, limit - 1);
    if (!idx) {
      good = false;
    } else if (std::find(out.begin(), out.end(), static_cast<int>(*idx)) != out.end()) {
      ctx.error(join_path(path, i), fmt::format("{} {} is listed twice", what, *idx));
      good = false;
    } else {
      out.push_back(static_cast<int>(*idx));
    }
  }
  if (!good) return std::nullopt;
  return out;
}

}  // namespace chaosbench::harness

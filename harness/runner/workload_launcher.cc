#include "harness/runner/workload_launcher.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/scenario/placeholders.h"

namespace chaosbench::harness {
namespace {

std::vector<std::string> collective_argv(const CollectiveWorkload& w, const LaunchContext& ctx, const std::string& host) {
  return {ctx.self_exe,
          "worker",
          "collective",
          "--collectives", fmt::format("{}", fmt::join(w.collectives, ",")),
          "--algorithms", fmt::format("{}", fmt::join(w.algorithms, ",")),
          "--min-size", fmt::format("{}B", w.min_size.bytes),
          "--max-size", fmt::format("{}B", w.max_size.bytes),
          "--factor", std::to_string(w.factor),
          "--warmup", std::to_string(w.warmup_iters),
          "--iters", std::to_string(w.iters),
          "--duration-ms", std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(w.duration.value).count()),
          "--check", w.check ? "1" : "0",
          "--store", "file:" + ctx.runtime_dir + "/store",
          "--prefix", ctx.run_id,
          "--host", host,
          "--timeout-ms", std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(w.timeout.value).count())};
}

std::string ms_string(const Duration& d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d.value).count());
}

std::vector<std::string> train_argv(const TrainWorkload& w, const LaunchContext& ctx, const std::string& host) {
  std::vector<std::string> layers;
  for (int l : w.layers) layers.push_back(std::to_string(l));
  std::string dir = w.checkpoint.dir;
  if (dir.empty()) dir = ctx.run_dir + "/checkpoints";
  else if (dir.front() != '/') dir = ctx.scenario_dir + "/" + dir;
  const char* recovery = w.recovery.mode == RecoveryMode::kRestart   ? "restart"
                         : w.recovery.mode == RecoveryMode::kElastic ? "elastic"
                                                                     : "none";
  std::vector<std::string> argv{ctx.self_exe,
                                "worker",
                                "train",
                                "--layers", fmt::format("{}", fmt::join(layers, ",")),
                                "--batch-size", std::to_string(w.batch_size),
                                "--steps", std::to_string(w.steps),
                                "--seed", std::to_string(ctx.seed),
                                "--optimizer", w.optimizer,
                                "--lr", fmt::format("{}", w.lr),
                                "--momentum", fmt::format("{}", w.momentum),
                                "--weight-decay", fmt::format("{}", w.weight_decay),
                                "--beta1", fmt::format("{}", w.beta1),
                                "--beta2", fmt::format("{}", w.beta2),
                                "--eps", fmt::format("{}", w.eps),
                                "--bucket-size", fmt::format("{}B", w.bucket_size.bytes),
                                "--algorithm", w.algorithm,
                                "--threads", std::to_string(w.threads),
                                "--recovery", recovery,
                                "--store", "file:" + ctx.runtime_dir + "/store",
                                "--prefix", ctx.run_id,
                                "--host", host,
                                "--timeout-ms", ms_string(w.timeout)};
  if (w.target_loss) argv.insert(argv.end(), {"--target-loss", fmt::format("{}", *w.target_loss)});
  if (w.checkpoint.every_steps > 0)
    argv.insert(argv.end(), {"--checkpoint-dir", dir, "--checkpoint-every", std::to_string(w.checkpoint.every_steps),
                             "--checkpoint-mode", w.checkpoint.incremental ? "incremental" : "full",
                             "--checkpoint-full-every", std::to_string(w.checkpoint.full_every), "--checkpoint-async",
                             w.checkpoint.async ? "1" : "0"});
  return argv;
}

}  // namespace

std::vector<RankLaunch> plan_workload(const Scenario& scenario, const LaunchContext& ctx) {
  const auto& cluster = scenario.cluster;
  std::vector<int> nodes;
  const auto* command = std::get_if<CommandWorkload>(&scenario.workload);
  if (!ctx.only_nodes.empty()) {
    nodes = ctx.only_nodes;
  } else if (command && !command->nodes.empty()) {
    nodes = command->nodes;
  } else {
    for (int n = 0; n < cluster.nodes; ++n) nodes.push_back(n);
  }
  const int world = static_cast<int>(nodes.size()) * cluster.ranks_per_node;
  const std::string master_addr = ctx.node_addrs.at(static_cast<std::size_t>(nodes.front()));

  std::vector<RankLaunch> out;
  int rank = 0;
  for (int node : nodes) {
    for (int local = 0; local < cluster.ranks_per_node; ++local, ++rank) {
      RankLaunch l;
      l.rank = rank;
      l.node = node;
      l.local_rank = local;
      const std::string& addr = ctx.node_addrs.at(static_cast<std::size_t>(node));
      auto lookup = [&](std::string_view name) -> std::string {
        if (name == "rank") return std::to_string(l.rank);
        if (name == "local_rank") return std::to_string(local);
        if (name == "world_size") return std::to_string(world);
        if (name == "node") return std::to_string(node);
        if (name == "master_addr") return master_addr;
        if (name == "master_port") return std::to_string(ctx.master_port);
        if (name == "out") return ctx.run_dir;
        if (name == "scenario_dir") return ctx.scenario_dir;
        // "node.N.addr", checked by the parser
        auto idx = std::stoul(std::string(name.substr(5, name.size() - 10)));
        return ctx.node_addrs.at(idx);
      };
      auto& spec = l.spec;
      spec.name = fmt::format("rank{}", rank);
      spec.stdout_path = fmt::format("{}/logs/rank{}.out", ctx.run_dir, rank);
      spec.stderr_path = fmt::format("{}/logs/rank{}.err", ctx.run_dir, rank);
      spec.env = {{"CHAOSBENCH_RANK", std::to_string(rank)},
                  {"CHAOSBENCH_WORLD_SIZE", std::to_string(world)},
                  {"CHAOSBENCH_LOCAL_RANK", std::to_string(local)},
                  {"CHAOSBENCH_NODE", std::to_string(node)},
                  {"CHAOSBENCH_NODE_ADDR", addr},
                  {"CHAOSBENCH_METRICS", ctx.metrics_address},
                  {"CHAOSBENCH_RUN_DIR", ctx.run_dir},
                  {"RANK", std::to_string(rank)},
                  {"WORLD_SIZE", std::to_string(world)},
                  {"LOCAL_RANK", std::to_string(local)},
                  {"LOCAL_WORLD_SIZE", std::to_string(cluster.ranks_per_node)},
                  {"MASTER_ADDR", master_addr},
                  {"MASTER_PORT", std::to_string(ctx.master_port)}};
      if (const auto* coll = std::get_if<CollectiveWorkload>(&scenario.workload)) {
        spec.argv = collective_argv(*coll, ctx, addr);
      } else if (const auto* train = std::get_if<TrainWorkload>(&scenario.workload)) {
        spec.argv = train_argv(*train, ctx, addr);
      } else {
        for (const auto& a : command->argv) spec.argv.push_back(expand_placeholders(a, lookup));
        for (const auto& [k, v] : command->env) spec.env[k] = expand_placeholders(v, lookup);
        if (!command->cwd.empty()) spec.cwd = expand_placeholders(command->cwd, lookup);
      }
      out.push_back(std::move(l));
    }
  }
  return out;
}

}  // namespace chaosbench::harness

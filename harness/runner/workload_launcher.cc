#include "harness/runner/workload_launcher.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "faults/registry.h"
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

std::vector<std::string> train_argv(const Scenario& scenario, const TrainWorkload& w, const LaunchContext& ctx,
                                    const std::string& host) {
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
                                "--device", w.device,
                                "--backend", w.backend,
                                "--recovery", recovery,
                                "--store", "file:" + ctx.runtime_dir + "/store",
                                "--prefix", ctx.run_id,
                                "--host", host,
                                "--timeout-ms", ms_string(w.timeout),
                                "--sdc-check-every", std::to_string(w.sdc_check_every.value_or(
                                                         has_fault_with(scenario, faults::kSilentCorruption) ? 1 : 0))};
  // With recovery and a hang to expect, a step that hangs past recovery.hang_timeout ends
  // the rank (its watchdog), so a GPU or collective hang becomes a failure recovery acts
  // on. Not otherwise: a rank paused (node.pause) past it would end on thawing.
  if (w.recovery.mode != RecoveryMode::kNone && has_fault_with(scenario, faults::kHangs))
    argv.insert(argv.end(), {"--watchdog-ms", ms_string(w.recovery.hang_timeout)});
  if (w.target_loss) argv.insert(argv.end(), {"--target-loss", fmt::format("{}", *w.target_loss)});
  if (w.checkpoint.every_steps > 0)
    argv.insert(argv.end(), {"--checkpoint-dir", dir, "--checkpoint-every", std::to_string(w.checkpoint.every_steps),
                             "--checkpoint-mode", w.checkpoint.incremental ? "incremental" : "full",
                             "--checkpoint-full-every", std::to_string(w.checkpoint.full_every), "--checkpoint-async",
                             w.checkpoint.async ? "1" : "0"});
  return argv;
}

int serve_load_node(const ServeWorkload& w, const ClusterSpec& cluster) {
  return w.load.node >= 0 ? w.load.node : cluster.nodes - 1;
}

std::vector<int> serve_replicas(const ServeWorkload& w, const ClusterSpec& cluster) {
  if (!w.replicas.empty()) return w.replicas;
  std::vector<int> out;
  for (int n = 0; n < cluster.nodes; ++n)
    if (n != serve_load_node(w, cluster)) out.push_back(n);
  return out;
}

// The port replica `node` listens on: `port` in its own namespace; on a cluster of local
// processes (every node on 127.0.0.1) each replica needs a port of its own.
int replica_port(const ServeWorkload& w, const ClusterSpec& cluster, const LaunchContext& ctx, int node) {
  const auto replicas = serve_replicas(w, cluster);
  const bool shared_address =
      std::count(ctx.node_addrs.begin(), ctx.node_addrs.end(), ctx.node_addrs.front()) > 1;
  const auto at = std::find(replicas.begin(), replicas.end(), node) - replicas.begin();
  return w.port + (shared_address ? static_cast<int>(at) : 0);
}

std::string joined(const std::vector<int>& v) {
  std::vector<std::string> parts;
  for (int x : v) parts.push_back(std::to_string(x));
  return fmt::format("{}", fmt::join(parts, ","));
}

std::vector<std::string> serve_argv(const ServeWorkload& w, const LaunchContext& ctx, const ClusterSpec& cluster,
                                    int node, const std::string& host) {
  std::vector<std::string> argv{ctx.self_exe, "worker", "serve",
                                "--model", w.model_name,
                                "--layers", joined(w.layers),
                                "--dtype", w.dtype,
                                "--host", host,
                                "--port", std::to_string(replica_port(w, cluster, ctx, node)),
                                "--max-batch-size", std::to_string(w.batching.max_batch_size),
                                "--max-queue-delay-us",
                                std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(
                                                   w.batching.max_queue_delay.value).count()),
                                "--queue-limit", std::to_string(w.queue_limit),
                                "--seed", std::to_string(ctx.seed)};
  if (!w.batching.preferred_batch_sizes.empty())
    argv.insert(argv.end(), {"--preferred-batch-sizes", joined(w.batching.preferred_batch_sizes)});
  if (!w.checkpoint_dir.empty()) {
    std::string dir = w.checkpoint_dir.front() == '/' ? w.checkpoint_dir : ctx.scenario_dir + "/" + w.checkpoint_dir;
    argv.insert(argv.end(), {"--checkpoint-dir", dir});
  }
  return argv;
}

std::vector<std::string> load_argv(const ServeWorkload& w, const LaunchContext& ctx, const ClusterSpec& cluster) {
  std::vector<std::string> endpoints;
  for (int n : serve_replicas(w, cluster))
    endpoints.push_back(fmt::format("http://{}:{}", ctx.node_addrs.at(static_cast<std::size_t>(n)),
                                    replica_port(w, cluster, ctx, n)));
  return {ctx.self_exe, "worker", "load",
          "--endpoints", fmt::format("{}", fmt::join(endpoints, ",")),
          "--model", w.model_name,
          "--scenario", w.load.scenario,
          "--qps", fmt::format("{}", w.load.qps),
          "--duration", fmt::format("{}ms", std::chrono::duration_cast<std::chrono::milliseconds>(w.load.duration.value).count()),
          "--rows", std::to_string(w.load.rows),
          "--dim", std::to_string(w.layers.front()),
          "--connections", std::to_string(w.load.connections),
          "--timeout-ms", ms_string(w.load.timeout)};
}

}  // namespace

std::vector<RankLaunch> plan_workload(const Scenario& scenario, const LaunchContext& ctx) {
  const auto& cluster = scenario.cluster;
  std::vector<int> nodes;
  const auto* command = std::get_if<CommandWorkload>(&scenario.workload);
  const auto* serve = std::get_if<ServeWorkload>(&scenario.workload);
  if (!ctx.only_nodes.empty()) {
    nodes = ctx.only_nodes;
  } else if (serve) {  // the replicas, then the load generator
    nodes = serve_replicas(*serve, cluster);
    nodes.push_back(serve_load_node(*serve, cluster));
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
      for (const auto& [k, v] : ctx.env) spec.env[k] = v;
      // gloo, NCCL's socket transport and TensorPipe advertise the address of this
      // interface instead of guessing from the hostname; the scenario's env still wins.
      if (!ctx.node_interface.empty())
        for (const char* var : {"GLOO_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME", "TP_SOCKET_IFNAME"})
          spec.env[var] = ctx.node_interface;
      if (const auto* coll = std::get_if<CollectiveWorkload>(&scenario.workload)) {
        spec.argv = collective_argv(*coll, ctx, addr);
      } else if (const auto* train = std::get_if<TrainWorkload>(&scenario.workload)) {
        spec.argv = train_argv(scenario, *train, ctx, addr);
      } else if (serve) {
        const bool driver = node == serve_load_node(*serve, cluster);
        spec.argv = driver ? load_argv(*serve, ctx, cluster) : serve_argv(*serve, ctx, cluster, node, addr);
        l.service = !driver;
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

std::string gpu_interposer_for(const Scenario& scenario, const std::string& self_exe) {
  if (!std::holds_alternative<CommandWorkload>(scenario.workload)) return "";
  // Faults the workload acts out itself (the registry names workloads for them): in a
  // command, the interposer does.
  bool inside = false;
  for (const auto& f : scenario.faults) {
    const auto* info = faults::find_fault_type(f.type);
    inside = inside || (info && !info->workloads.empty());
  }
  if (!inside) return "";
  return (std::filesystem::path(self_exe).parent_path().parent_path() / "lib" / "libchaosbench_cuda.so")
      .lexically_normal()
      .string();
}

}  // namespace chaosbench::harness

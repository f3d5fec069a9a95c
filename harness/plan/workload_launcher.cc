#include "harness/plan/workload_launcher.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/collective/collective_settings.h"
#include "bench/common/flag_values.h"
#include "bench/load/load_settings.h"
#include "bench/serve/serve_settings.h"
#include "bench/train/train_settings.h"
#include "common/install_layout.h"
#include "faults/registry/registry.h"
#include "harness/scenario/placeholders.h"

namespace chaosbench::harness {
namespace {

std::string store_for(const LaunchContext& ctx, int node) {
  const auto n = static_cast<std::size_t>(node);
  if (n < ctx.node_stores.size() && !ctx.node_stores[n].empty()) return ctx.node_stores[n];
  return "file:" + ctx.runtime_dir + "/store";
}

std::vector<std::string> collective_argv(const CollectiveWorkload& w, const LaunchContext& ctx, int node,
                                         const std::string& host) {
  std::vector<std::string> argv{ctx.self_exe, "worker", "collective"};
  for (auto& flag : bench::encode_collective_settings(w)) argv.push_back(std::move(flag));
  argv.insert(argv.end(), {"--store", store_for(ctx, node), "--prefix", ctx.run_id, "--host", host});
  return argv;
}

std::vector<std::string> train_argv(const Scenario& scenario, const TrainWorkload& w, const LaunchContext& ctx,
                                    int node, const std::string& host) {
  TrainWorkload settings = w;
  auto& dir = settings.checkpoint.dir;
  if (dir.empty()) dir = ctx.run_dir + "/checkpoints";
  else if (dir.front() != '/') dir = ctx.scenario_dir + "/" + dir;
  if (!settings.sdc_check_every) settings.sdc_check_every = has_fault_with(scenario, faults::kSilentCorruption) ? 1 : 0;
  std::vector<std::string> argv{ctx.self_exe, "worker", "train"};
  for (auto& flag : bench::train::encode_train_settings(settings)) argv.push_back(std::move(flag));
  argv.insert(argv.end(), {"--seed", std::to_string(ctx.seed),
                           "--store", store_for(ctx, node),
                           "--prefix", ctx.run_id,
                           "--host", host});
  // With recovery and a hang to expect, a step that hangs past recovery.hang_timeout ends
  // the rank (its watchdog), so a GPU or collective hang becomes a failure recovery acts
  // on. Not otherwise: a rank paused (node.pause) past it would end on thawing.
  if (w.recovery.mode != RecoveryMode::kNone && has_fault_with(scenario, faults::kHangs))
    argv.insert(argv.end(), {"--watchdog-ms", bench::ms_flag(w.recovery.hang_timeout)});
  return argv;
}

// Where a serving workload (serve or llm) puts its load generator and its replicas.
template <class Workload>
int load_node_of(const Workload& w, const ClusterSpec& cluster) {
  return w.load.node >= 0 ? w.load.node : cluster.nodes - 1;
}

template <class Workload>
std::vector<int> replicas_of(const Workload& w, const ClusterSpec& cluster) {
  if (!w.replicas.empty()) return w.replicas;
  std::vector<int> out;
  for (int n = 0; n < cluster.nodes; ++n)
    if (n != load_node_of(w, cluster)) out.push_back(n);
  return out;
}

// The port replica `node` listens on: `port` in its own namespace; on a cluster of local
// processes (every node on 127.0.0.1) each replica needs a port of its own.
int replica_port(const std::vector<int>& replicas, int port, const LaunchContext& ctx, int node) {
  const bool shared_address =
      std::count(ctx.node_addrs.begin(), ctx.node_addrs.end(), ctx.node_addrs.front()) > 1;
  const auto at = std::find(replicas.begin(), replicas.end(), node) - replicas.begin();
  return port + (shared_address ? static_cast<int>(at) : 0);
}

// "http://ADDR:PORT" of every replica, in replica order.
std::vector<std::string> replica_urls(const std::vector<int>& replicas, int port, const LaunchContext& ctx) {
  std::vector<std::string> urls;
  for (int n : replicas)
    urls.push_back(fmt::format("http://{}:{}", ctx.node_addrs.at(static_cast<std::size_t>(n)),
                               replica_port(replicas, port, ctx, n)));
  return urls;
}

std::string scenario_relative(const LaunchContext& ctx, const std::string& path) {
  if (path.empty() || path.front() == '/') return path;
  return ctx.scenario_dir + "/" + path;
}

std::vector<std::string> serve_argv(const ServeWorkload& w, const LaunchContext& ctx, const ClusterSpec& cluster,
                                    int node, const std::string& host) {
  bench::serve::ServeSettings settings = w;
  settings.port = replica_port(replicas_of(w, cluster), w.port, ctx, node);
  settings.checkpoint_dir = scenario_relative(ctx, settings.checkpoint_dir);
  std::vector<std::string> argv{ctx.self_exe, "worker", "serve"};
  for (auto& flag : bench::serve::encode_serve_settings(settings)) argv.push_back(std::move(flag));
  argv.insert(argv.end(), {"--host", host, "--seed", std::to_string(ctx.seed)});
  return argv;
}

std::vector<std::string> load_argv(const ServeWorkload& w, const LaunchContext& ctx, const ClusterSpec& cluster) {
  const auto endpoints = replica_urls(replicas_of(w, cluster), w.port, ctx);
  std::vector<std::string> argv{ctx.self_exe, "worker", "load"};
  for (auto& flag : bench::load::encode_load_settings(w.load)) argv.push_back(std::move(flag));
  argv.insert(argv.end(), {"--endpoints", fmt::format("{}", fmt::join(endpoints, ",")),
                           "--model", w.model_name,
                           "--dim", std::to_string(w.layers.front())});
  return argv;
}

std::vector<std::string> llm_serve_argv(const LlmWorkload& w, const LaunchContext& ctx, const ClusterSpec& cluster,
                                        int node, const std::string& host) {
  bench::llm::LlmServeSettings settings = w;
  settings.port = replica_port(replicas_of(w, cluster), w.port, ctx, node);
  std::vector<std::string> argv{ctx.self_exe, "worker", "llm-serve"};
  for (auto& flag : bench::llm::encode_llm_serve_settings(settings)) argv.push_back(std::move(flag));
  argv.insert(argv.end(), {"--host", host, "--seed", std::to_string(ctx.seed)});
  return argv;
}

std::vector<std::string> llm_load_argv(const LlmWorkload& w, const LaunchContext& ctx, const ClusterSpec& cluster) {
  const auto endpoints = w.endpoints.empty() ? replica_urls(replicas_of(w, cluster), w.port, ctx) : w.endpoints;
  bench::llm::LlmLoadSettings settings = w.load;
  settings.dataset = scenario_relative(ctx, settings.dataset);
  std::vector<std::string> argv{ctx.self_exe, "worker", "llm-load"};
  for (auto& flag : bench::llm::encode_llm_load_settings(settings)) argv.push_back(std::move(flag));
  argv.insert(argv.end(), {"--endpoints", fmt::format("{}", fmt::join(endpoints, ",")),
                           "--model", w.model_name,
                           "--seed", std::to_string(ctx.seed)});
  return argv;
}

}  // namespace

namespace {

// The nodes ranks go on, in rank order: a restart's remaining nodes, a serving workload's
// replicas then its load generator (an llm workload on outside endpoints: the load
// generator alone), a command's nodes, or every node.
std::vector<int> launch_nodes(const Scenario& scenario, const LaunchContext& ctx) {
  const auto& cluster = scenario.cluster;
  const auto* command = std::get_if<CommandWorkload>(&scenario.workload);
  const auto* serve = std::get_if<ServeWorkload>(&scenario.workload);
  const auto* llm = std::get_if<LlmWorkload>(&scenario.workload);
  if (!ctx.only_nodes.empty()) return ctx.only_nodes;
  if (serve) {
    auto nodes = replicas_of(*serve, cluster);
    nodes.push_back(load_node_of(*serve, cluster));
    return nodes;
  }
  if (llm) {
    std::vector<int> nodes;
    if (llm->endpoints.empty()) nodes = replicas_of(*llm, cluster);
    nodes.push_back(load_node_of(*llm, cluster));
    return nodes;
  }
  if (command && !command->nodes.empty()) return command->nodes;
  std::vector<int> nodes;
  for (int n = 0; n < cluster.nodes; ++n) nodes.push_back(n);
  return nodes;
}

}  // namespace

std::vector<RankLaunch> plan_workload(const Scenario& scenario, const LaunchContext& ctx) {
  const auto& cluster = scenario.cluster;
  const auto* command = std::get_if<CommandWorkload>(&scenario.workload);
  const auto* serve = std::get_if<ServeWorkload>(&scenario.workload);
  const std::vector<int> nodes = launch_nodes(scenario, ctx);
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
        spec.argv = collective_argv(*coll, ctx, node, addr);
      } else if (const auto* train = std::get_if<TrainWorkload>(&scenario.workload)) {
        spec.argv = train_argv(scenario, *train, ctx, node, addr);
      } else if (serve) {
        const bool driver = node == load_node_of(*serve, cluster);
        spec.argv = driver ? load_argv(*serve, ctx, cluster) : serve_argv(*serve, ctx, cluster, node, addr);
        l.service = !driver;
      } else if (const auto* llm = std::get_if<LlmWorkload>(&scenario.workload)) {
        const bool driver = node == load_node_of(*llm, cluster);
        spec.argv = driver ? llm_load_argv(*llm, ctx, cluster) : llm_serve_argv(*llm, ctx, cluster, node, addr);
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

std::vector<std::string> store_arguments(const std::vector<RankLaunch>& launches) {
  std::vector<std::string> out;
  for (const auto& l : launches) {
    const auto& argv = l.spec.argv;
    auto it = std::find(argv.begin(), argv.end(), "--store");
    if (it != argv.end() && it + 1 != argv.end() && std::find(out.begin(), out.end(), *(it + 1)) == out.end())
      out.push_back(*(it + 1));
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
  return common::library_beside(self_exe, "libchaosbench_cuda.so");
}

}  // namespace chaosbench::harness

#include "harness/plan/workload_launcher.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/files/install_layout.h"
#include "faults/registry/registry.h"
#include "harness/workloads/workload_plan.h"

namespace chaosbench::harness {
namespace {

// What every rank's placeholders expand to ({rank}, {master_addr}, {node.N.addr}, ...).
std::function<std::string(std::string_view)> placeholders_of(const RankPlace& at, const LaunchContext& ctx,
                                                             const std::string& master_addr) {
  return [at, &ctx, master_addr](std::string_view name) -> std::string {
    if (name == "rank") return std::to_string(at.rank);
    if (name == "local_rank") return std::to_string(at.local_rank);
    if (name == "world_size") return std::to_string(at.world);
    if (name == "node") return std::to_string(at.node);
    if (name == "master_addr") return master_addr;
    if (name == "master_port") return std::to_string(ctx.master_port);
    if (name == "out") return ctx.run_dir;
    if (name == "scenario_dir") return ctx.scenario_dir;
    // "node.N.addr", checked by the parser
    auto idx = std::stoul(std::string(name.substr(5, name.size() - 10)));
    return ctx.node_addrs.at(idx);
  };
}

// The environment every rank gets, below the kind's own and the scenario's.
std::map<std::string, std::string> rank_environment(const RankPlace& at, const LaunchContext& ctx,
                                                    const std::string& master_addr, int ranks_per_node) {
  std::map<std::string, std::string> env{{"CHAOSBENCH_RANK", std::to_string(at.rank)},
                                         {"CHAOSBENCH_WORLD_SIZE", std::to_string(at.world)},
                                         {"CHAOSBENCH_LOCAL_RANK", std::to_string(at.local_rank)},
                                         {"CHAOSBENCH_NODE", std::to_string(at.node)},
                                         {"CHAOSBENCH_NODE_ADDR", at.address},
                                         {"CHAOSBENCH_METRICS", ctx.metrics_address},
                                         {"CHAOSBENCH_RUN_DIR", ctx.run_dir},
                                         {"RANK", std::to_string(at.rank)},
                                         {"WORLD_SIZE", std::to_string(at.world)},
                                         {"LOCAL_RANK", std::to_string(at.local_rank)},
                                         {"LOCAL_WORLD_SIZE", std::to_string(ranks_per_node)},
                                         {"MASTER_ADDR", master_addr},
                                         {"MASTER_PORT", std::to_string(ctx.master_port)}};
  for (const auto& [k, v] : ctx.env) env[k] = v;
  // gloo, NCCL's socket transport and TensorPipe advertise the address of this interface
  // instead of guessing from the hostname; the scenario's env still wins.
  if (!ctx.node_interface.empty())
    for (const char* var : {"GLOO_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME", "TP_SOCKET_IFNAME"}) env[var] = ctx.node_interface;
  return env;
}

}  // namespace

std::vector<RankLaunch> plan_workload(const Scenario& scenario, const LaunchContext& ctx) {
  const auto& cluster = scenario.cluster;
  const auto plan = make_workload_plan(scenario);
  // A restart's remaining nodes, or the kind's (a serving workload's replicas then its
  // load generator, a command's nodes, every node).
  const std::vector<int> nodes = ctx.only_nodes.empty() ? plan->nodes(cluster) : ctx.only_nodes;
  const int world = static_cast<int>(nodes.size()) * cluster.ranks_per_node;
  const std::string master_addr = ctx.node_addrs.at(static_cast<std::size_t>(nodes.front()));

  std::vector<RankLaunch> out;
  int rank = 0;
  for (int node : nodes) {
    for (int local = 0; local < cluster.ranks_per_node; ++local, ++rank) {
      RankPlace at{rank, node, local, world, ctx.node_addrs.at(static_cast<std::size_t>(node)), nullptr};
      at.placeholder = placeholders_of(at, ctx, master_addr);
      RankCommand command = plan->command(at, ctx);
      RankLaunch l;
      l.rank = rank;
      l.node = node;
      l.local_rank = local;
      l.service = command.service;
      auto& spec = l.spec;
      spec.name = fmt::format("rank{}", rank);
      spec.stdout_path = fmt::format("{}/logs/rank{}.out", ctx.run_dir, rank);
      spec.stderr_path = fmt::format("{}/logs/rank{}.err", ctx.run_dir, rank);
      spec.env = rank_environment(at, ctx, master_addr, cluster.ranks_per_node);
      for (auto& [k, v] : command.env) spec.env[k] = std::move(v);
      spec.argv = std::move(command.argv);
      spec.cwd = std::move(command.cwd);
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
  if (!make_workload_plan(scenario)->needs_gpu_interposer()) return "";
  // Faults the workload acts out itself (the registry names workloads for them): in a
  // program of the user's, the interposer does.
  bool inside = false;
  for (const auto& f : scenario.faults) {
    const auto* info = faults::find_fault_type(f.type);
    inside = inside || (info && !info->workloads.empty());
  }
  if (!inside) return "";
  return common::library_beside(self_exe, "libchaosbench_cuda.so");
}

}  // namespace chaosbench::harness

// `serve`: a KServe replica (`worker serve`, a service) on each replica node, and the load
// generator (`worker load`) on the load node, which ends the run when its load is done.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/load/load_settings.h"
#include "bench/serve/serve_settings.h"
#include "harness/workloads/serving_placement.h"
#include "harness/workloads/workload_kinds.h"

namespace chaosbench::harness {
namespace {

class ServePlan final : public WorkloadPlan {
 public:
  ServePlan(const ServeWorkload& w, const ClusterSpec& cluster) : w_(w), cluster_(cluster) {}

  std::vector<int> nodes(const ClusterSpec& cluster) const override {
    auto nodes = replicas_of(w_, cluster);
    nodes.push_back(load_node_of(w_, cluster));
    return nodes;
  }
  RankCommand command(const RankPlace& at, const LaunchContext& ctx) const override {
    if (at.node == load_node_of(w_, cluster_)) return load(ctx);
    bench::serve::ServeSettings settings = w_;
    settings.port = replica_port(replicas_of(w_, cluster_), w_.port, ctx, at.node);
    settings.checkpoint_dir = ctx.scenario_relative(settings.checkpoint_dir);
    RankCommand c;
    c.argv = {ctx.self_exe, "worker", "serve"};
    for (auto& flag : bench::serve::encode_serve_settings(settings)) c.argv.push_back(std::move(flag));
    c.argv.insert(c.argv.end(), {"--host", at.address, "--seed", std::to_string(ctx.seed)});
    c.service = true;
    return c;
  }
  std::optional<double> planned_seconds() const override { return w_.load.duration.seconds(); }
  std::map<std::string, std::string> backends(std::int64_t) const override {
    return {{"serve", "KServe v2 over HTTP/1.1, dynamic batching; open-loop load generator"}};
  }

 private:
  RankCommand load(const LaunchContext& ctx) const {
    const auto endpoints = replica_urls(replicas_of(w_, cluster_), w_.port, ctx);
    RankCommand c;
    c.argv = {ctx.self_exe, "worker", "load"};
    for (auto& flag : bench::load::encode_load_settings(w_.load)) c.argv.push_back(std::move(flag));
    c.argv.insert(c.argv.end(), {"--endpoints", fmt::format("{}", fmt::join(endpoints, ",")), "--model", w_.model_name,
                                 "--dim", std::to_string(w_.layers.front())});
    return c;
  }

  const ServeWorkload& w_;
  const ClusterSpec& cluster_;
};

}  // namespace

std::unique_ptr<WorkloadPlan> make_serve_plan(const Scenario& scenario) {
  return std::make_unique<ServePlan>(std::get<ServeWorkload>(scenario.workload), scenario.cluster);
}

}  // namespace chaosbench::harness

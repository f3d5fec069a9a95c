// `llm`: an OpenAI-compatible replica (`worker llm-serve`, a service) on each replica node,
// unless the load goes to outside endpoints, and the token-level load generator
// (`worker llm-load`) on the load node, which ends the run when its load is done.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/workloads/serving_placement.h"
#include "harness/workloads/workload_kinds.h"

namespace chaosbench::harness {
namespace {

class LlmPlan final : public WorkloadPlan {
 public:
  LlmPlan(const LlmWorkload& w, const ClusterSpec& cluster) : w_(w), cluster_(cluster) {}

  std::vector<int> nodes(const ClusterSpec& cluster) const override {
    std::vector<int> nodes;
    if (w_.endpoints.empty()) nodes = replicas_of(w_, cluster);
    nodes.push_back(load_node_of(w_, cluster));
    return nodes;
  }
  RankCommand command(const RankPlace& at, const LaunchContext& ctx) const override {
    if (at.node == load_node_of(w_, cluster_)) return load(ctx);
    bench::llm::LlmServeSettings settings = w_;
    settings.port = replica_port(replicas_of(w_, cluster_), w_.port, ctx, at.node);
    RankCommand c;
    c.argv = {ctx.self_exe, "worker", "llm-serve"};
    for (auto& flag : bench::llm::encode_llm_serve_settings(settings)) c.argv.push_back(std::move(flag));
    c.argv.insert(c.argv.end(), {"--host", at.address, "--seed", std::to_string(ctx.seed)});
    c.service = true;
    return c;
  }
  // find_peak runs trials until it brackets the peak: no end to foresee.
  std::optional<double> planned_seconds() const override {
    if (w_.load.find_peak) return std::nullopt;
    return w_.load.duration.seconds();
  }
  std::map<std::string, std::string> backends(std::int64_t) const override {
    if (!w_.endpoints.empty()) return {{"llm", "outside OpenAI-compatible servers, token-level load generator"}};
    return {{"llm", fmt::format("built-in OpenAI-compatible server ({} engine), token-level load generator", w_.engine)}};
  }

 private:
  RankCommand load(const LaunchContext& ctx) const {
    const auto endpoints = w_.endpoints.empty() ? replica_urls(replicas_of(w_, cluster_), w_.port, ctx) : w_.endpoints;
    bench::llm::LlmLoadSettings settings = w_.load;
    settings.dataset = ctx.scenario_relative(settings.dataset);
    RankCommand c;
    c.argv = {ctx.self_exe, "worker", "llm-load"};
    for (auto& flag : bench::llm::encode_llm_load_settings(settings)) c.argv.push_back(std::move(flag));
    c.argv.insert(c.argv.end(), {"--endpoints", fmt::format("{}", fmt::join(endpoints, ",")), "--model", w_.model_name,
                                 "--seed", std::to_string(ctx.seed)});
    return c;
  }

  const LlmWorkload& w_;
  const ClusterSpec& cluster_;
};

}  // namespace

std::unique_ptr<WorkloadPlan> make_llm_plan(const Scenario& scenario) {
  return std::make_unique<LlmPlan>(std::get<LlmWorkload>(scenario.workload), scenario.cluster);
}

}  // namespace chaosbench::harness

#include "harness/run/run_environment.h"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "faults/registry/registry.h"
#include "harness/core/host_error.h"
#include "harness/core/run_stamps.h"

namespace chaosbench::harness {

using TL = TimelineLog;

RunEnvironment::RunEnvironment(const Scenario& scenario, const RunOptions& options, const std::string& run_id,
                               const std::function<double()>& now_s, AgentHub::RecordSink records) {
  const std::string out = RunDirectory::resolve_out(options.out_dir, scenario.name);
  journal_ = std::make_unique<Journal>(Journal::default_directory(), run_id, out);
  dir_ = std::make_unique<RunDirectory>(out, run_id, *journal_);
  out_ = dir_->out();
  timeline_ = std::make_unique<TimelineLog>(dir_->out() + "/timeline.jsonl");
  started_at_ = utc_timestamp_iso();
  timeline_->write(0, "run_started", {{"scenario", TL::str(scenario.name)}, {"run_id", TL::str(run_id)}, {"out", TL::str(dir_->out())},
                                      {"seed", TL::num(static_cast<double>(scenario.seed))}});
  if (runs_agents(scenario.cluster.mode)) {
    auto site = std::make_unique<RemoteSite>(scenario, run_id, dir_->out(), dir_->runtime(), std::move(records));
    remote_ = site.get();
    site_ = std::move(site);
    return;
  }
  make_node_cgroups(scenario, run_id);
  cluster_ = std::make_unique<ClusterNetwork>(scenario.cluster, scenario.seed, run_id, dir_->runtime(), *journal_,
                                              *timeline_, now_s());
  namespaced_ = cluster_->namespaced();
  check_faults_can_run(scenario);
  site_ = std::make_unique<LocalSite>(scenario.cluster, scenario.seed, *journal_, *cgroups_, *cluster_, dir_->runtime());
}

RunEnvironment::~RunEnvironment() = default;

// Each node's cgroups with the controllers the faults need beside freezer and pids.
void RunEnvironment::make_node_cgroups(const Scenario& scenario, const std::string& run_id) {
  std::vector<std::string> controllers{"freezer", "pids"};
  for (const auto& f : scenario.faults) {
    const auto need = std::string(faults::find_fault_type(f.type)->needs_cgroup);
    if (!need.empty() && std::find(controllers.begin(), controllers.end(), need) == controllers.end())
      controllers.push_back(need);
  }
  cgroups_ = std::make_unique<NodeCgroups>(scenario.cluster.nodes, run_id, *journal_, controllers);
  cgroups_available_ = cgroups_->available();
  cgroup_version_ = cgroups_->version();
  std::vector<std::string> present;
  for (const auto& c : controllers)
    if (!cgroups_->dir(0, c).empty()) present.push_back(c);
  cgroup_list_ = fmt::format("{}", fmt::join(present, ", "));
  cgroups_why_not_ = cgroups_->why_not();
  if (!cgroups_available_) spdlog::info("node cgroups: {}", cgroups_why_not_);
}

// A fault this host cannot inject fails the run before anything starts (exit 3), never
// halfway through it.
void RunEnvironment::check_faults_can_run(const Scenario& scenario) const {
  for (const auto& f : scenario.faults) {
    const auto* info = faults::find_fault_type(f.type);
    if (info->needs_namespaces && !cluster_->namespaced())
      throw HostError(fmt::format("fault {} ({}) needs the cluster in network namespaces, and this run has local "
                                  "processes: {}", f.name, f.type, cluster_->why_local()));
    if (info->needs_cgroup.empty()) continue;
    if (cgroups_->dir(0, std::string(info->needs_cgroup)).empty())
      throw HostError(fmt::format("fault {} ({}) needs the {} cgroup of each node, which this host cannot give: {}", f.name,
                                  f.type, info->needs_cgroup,
                                  cgroups_available_ ? cgroups_->why_missing(std::string(info->needs_cgroup))
                                                     : cgroups_why_not_));
  }
}

std::vector<std::string> RunEnvironment::tear_down() {
  std::vector<std::string> errors;
  // The site stays, stopped, until destruction: the run's units hold it.
  cgroups_.reset();
  if (cluster_)
    for (const auto& e : cluster_->shut_down()) errors.push_back(fmt::format("cleanup: cluster.link: {}", e));
  dir_.reset();
  for (const auto& e : journal_->finish()) errors.push_back(fmt::format("cleanup: {}", e));
  return errors;
}

std::string RunEnvironment::description() const {
  if (remote_) return remote_->description();
  return fmt::format("{}, {}", namespaced_ ? "network namespaces (veth, bridge)" : "local processes on loopback",
                     cgroups_available_ ? fmt::format("node cgroups (v{}: {})", cgroup_version_, cgroup_list_)
                                        : fmt::format("no node cgroups ({})", cgroups_why_not_));
}

}  // namespace chaosbench::harness

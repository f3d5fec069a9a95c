// The node site for nodes on this machine: each node is a network namespace on the run's
// bridge (or, where the host or the scenario does not allow namespaces, the host's own
// network on loopback) with its own cgroups. Processes start through one supervisor and
// are journaled before they may exec; faults are made through the registry and act on
// the nodes' namespaces, cgroups and processes. See node_site.h for the contract.
// Threads: the run's thread only.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/files/unique_fd.h"
#include "harness/cluster/node_cgroups.h"
#include "harness/journal/journal.h"
#include "harness/site/cluster_network.h"
#include "harness/site/node_site.h"
#include "harness/process/process_supervisor.h"

namespace chaosbench::harness {

class LocalSite final : public NodeSite {
 public:
  // Borrows the run's cluster, journal, node cgroups and network, which must outlive it.
  // `runtime_dir` receives the GPU fault control blocks (control/).
  LocalSite(const ClusterSpec& cluster, std::uint64_t seed, Journal& journal, NodeCgroups& cgroups,
            ClusterNetwork& network, std::string runtime_dir);

  pid_t start(int node, ProcessSpec spec) override;
  void signal(pid_t pid, int sig) override { supervisor_.signal(pid, sig); }
  const ProcessStatus& status(pid_t pid) const override { return supervisor_.status(pid); }
  bool any_running() const override { return supervisor_.any_running(); }
  std::vector<pid_t> wait_any(std::chrono::milliseconds timeout) override { return supervisor_.wait_any(timeout); }
  std::vector<std::string> stop_all() override;

  std::string address(int node) const override { return network_.address(node); }
  int netns_fd(int node) const override { return network_.netns_fd(node); }
  int free_port(int node) override;
  std::string control_block(int rank) override;

  std::unique_ptr<faults::Fault> apply_fault(const FaultSpec& spec, std::size_t fault_index,
                                             const std::vector<RankProcess>& ranks,
                                             std::vector<std::string>* targets) override;

  bool frozen(int node) const override;
  bool oom_killed(int node) const override;

 private:
  const ClusterSpec& cluster_;
  std::uint64_t seed_;
  Journal& journal_;
  NodeCgroups& cgroups_;
  ClusterNetwork& network_;
  std::string control_dir_;                     // the ranks' control blocks (links to control_fds_)
  std::map<int, common::UniqueFd> control_fds_;  // by rank: sealed memfds, open for the whole run
  ProcessSupervisor supervisor_;
  int starting_node_ = 0;                    // the node of the process being started, for the fork hook
  std::vector<std::uint64_t> process_entries_;  // journal entries of the process groups
  bool stopped_ = false;
};

}  // namespace chaosbench::harness

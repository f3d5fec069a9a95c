// What the run driver does to the nodes of its cluster, and nothing more: start, signal
// and watch the processes on a node, give a rank its GPU fault control block, apply a
// fault on a scenario target, and read what a node reports (frozen, an OOM kill). The
// local site (local_site.h) implements it for nodes on this machine, in network
// namespaces or on loopback; a site of agents on other hosts implements the same calls,
// so nothing above this interface knows where a node runs. Tests drive the fault driver
// and the rank table through a fake site, without processes.
// Threads: the run's thread only. Calls may block briefly (a fork, a tc change).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <sys/types.h>
#include <vector>

#include "faults/fault.h"
#include "harness/process/process_supervisor.h"
#include "harness/plan/target_resolver.h"
#include "harness/scenario/scenario.h"

namespace chaosbench::harness {

class NodeSite {
 public:
  virtual ~NodeSite() = default;

  // --- processes ---
  // Starts `spec` on `node` (in its namespaces, its cgroups, journaled before it may
  // exec). Throws std::runtime_error when the program cannot start.
  virtual pid_t start(int node, ProcessSpec spec) = 0;
  // Signals the process group of `pid`; a no-op once it has ended.
  virtual void signal(pid_t pid, int sig) = 0;
  // Throws std::out_of_range for a pid this site did not start.
  virtual const ProcessStatus& status(pid_t pid) const = 0;
  virtual bool any_running() const = 0;
  // Waits up to `timeout` for an exit; returns the pids whose state changed (at once when
  // nothing runs, early on a signal).
  virtual std::vector<pid_t> wait_any(std::chrono::milliseconds timeout) = 0;
  // Stops every process (SIGTERM, grace, SIGKILL), reaps them and confirms that none of
  // their process groups is left. Returns what could not be confirmed. Idempotent.
  virtual std::vector<std::string> stop_all() = 0;

  // --- what the workload needs to find its peers ---
  // The address node `node`'s processes are reached at by their peers.
  virtual std::string address(int node) const = 0;
  // The name of the host `node` runs on, for records and the timeline; "" when the nodes
  // are on this machine.
  virtual std::string host_name(int /*node*/) const { return ""; }
  // The network namespace `node`'s processes run in, for a probe or a scrape that reaches
  // the node from its own vantage (common/kernel/netns.h in_netns); -1 when the node shares this
  // process's network (local processes, or a host of an agent mode reached directly).
  // The descriptor stays the site's, open for the run.
  virtual int netns_fd(int /*node*/) const { return -1; }
  // A TCP port free on `node` now, for a rendezvous the workload binds.
  virtual int free_port(int node) = 0;
  // Where the built-in workloads' ranks on `node` meet ("tcp:ADDR:PORT", the
  // controller's store as that node reaches it) and the token they show it; "" for both
  // where ranks share a filesystem and meet in a file store in the runtime directory.
  virtual std::string store_spec(int /*node*/) const { return ""; }
  virtual std::string store_token() const { return ""; }
  // The GPU fault control block of `rank` (common/gpu/control_block.h), made on its first
  // call and kept for the run, so a fault armed on a rank survives its restart. Returns
  // the path the rank's process maps. Throws HostError when it cannot be made.
  virtual std::string control_block(int rank) = 0;

  // --- faults ---
  // Resolves `spec.target` against `ranks` (the `fault_index`-th fault of the scenario:
  // random choices are seeded by it), names the targets in *targets (also when applying
  // then fails), creates the fault through the registry and applies it. Returns the
  // applied fault, whose revert() takes it out. Throws when it cannot be applied; then
  // nothing of it is in effect.
  virtual std::unique_ptr<faults::Fault> apply_fault(const FaultSpec& spec, std::size_t fault_index,
                                                     const std::vector<RankProcess>& ranks,
                                                     std::vector<std::string>* targets) = 0;

  // --- what a node reports ---
  // Whether `node` is frozen (a process started there would stop before exec).
  virtual bool frozen(int node) const = 0;
  // Whether the kernel's OOM killer has killed something in `node`'s memory cgroup.
  virtual bool oom_killed(int node) const = 0;
};

}  // namespace chaosbench::harness

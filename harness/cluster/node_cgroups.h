// One cgroup per node of the cluster, so node faults act on exactly that node's processes:
// freeze them (node.pause), cap their CPU (node.cpu_throttle) or memory
// (node.memory_limit), and find every process of the node. cgroup v1 (cpu, memory,
// freezer, pids), each made below the harness's own cgroup of that controller. Every
// directory is journaled before it is made; ranks join before they exec.
// Threads: the runner's thread only.
#pragma once

#include <map>
#include <string>
#include <sys/types.h>
#include <vector>

namespace chaosbench::harness {

class Journal;

// Where this process's cgroup of each v1 controller is: controller -> directory.
std::map<std::string, std::string> own_v1_cgroups();

class NodeCgroups {
 public:
  // Creates <own>/chaosbench-<run_id>/node<N> for each of `controllers` the host has.
  // The runner asks for freezer and pids always (pause, kill: cost nothing) and for cpu
  // or memory only when a fault needs them: CFS group scheduling alone costs a
  // collective ~5% of its bandwidth on an oversubscribed machine. When cgroups cannot be
  // made (not root, v2-only host), available() is false and why_not() says why.
  NodeCgroups(int nodes, const std::string& run_id, Journal& journal, const std::vector<std::string>& controllers);
  ~NodeCgroups();  // removes every directory through the journal (killing leftovers)
  NodeCgroups(const NodeCgroups&) = delete;
  NodeCgroups& operator=(const NodeCgroups&) = delete;

  bool available() const { return !dirs_.empty(); }
  const std::string& why_not() const { return why_not_; }

  // Moves `pid` into node `node`'s cgroups. Throws std::runtime_error on failure.
  void join(int node, pid_t pid) const;

  // The node's directory for `controller` ("cpu", "memory", "freezer", "pids"), or "".
  std::string dir(int node, const std::string& controller) const;

 private:
  Journal& journal_;
  std::string why_not_;
  // controller -> per node directory
  std::map<std::string, std::vector<std::string>> dirs_;
  std::vector<std::uint64_t> entries_;  // journal ids, in creation order
};

}  // namespace chaosbench::harness

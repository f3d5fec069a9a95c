// One cgroup per node of the cluster, so node faults act on exactly that node's processes:
// freeze them (node.pause), cap their CPU (node.cpu_throttle) or memory
// (node.memory_limit), and find every process of the node. Every directory and setting is
// journaled before it is made; ranks join before they exec.
//
// cgroup v1 (cpu, memory, freezer, pids): a directory per controller per node, each made
// below the harness's own cgroup of that controller. Used wherever the host mounts any of
// the controllers as v1 hierarchies (this machine, and hybrid hosts).
//
// cgroup v2 (unified hierarchy, or a hybrid's /sys/fs/cgroup/unified when no controller
// is on v1): one directory per node, <own>/chaosbench-<run_id>/node<N>, where <own> is the
// harness's own v2 cgroup ("0::/path" in /proc/self/cgroup). freezer and pids need no
// controller there (cgroup.freeze, cgroup.procs are in every group); cpu and memory are
// enabled in the subtree_control of <own> and of chaosbench-<run_id>. v2 lets a cgroup
// other than the root hand controllers to its children only while it holds no process
// itself, and the harness sits in <own>: when <own> lacks them, the harness first moves
// itself into the leaf chaosbench-<run_id>/harness, which it can only do when it is alone
// in <own> (started by `systemd-run --scope -p Delegate=yes`, say); else cpu and memory
// are missing, with the reason. Undone in reverse: nodes removed, the controllers turned
// off again, the harness moved back to <own>, the leaf and the run's cgroup removed.
// Threads: the runner's thread only.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace chaosbench::harness {

class Journal;

// Where this process's cgroup of each v1 controller is: controller -> directory.
std::map<std::string, std::string> own_v1_cgroups();

// This process's cgroup v2 directory: its "0::/path" line of /proc/self/cgroup under the
// cgroup2 mount (/sys/fs/cgroup preferred, then /sys/fs/cgroup/unified, then the first
// one), or "" when there is none. The second form takes the two files' text.
std::string own_v2_cgroup();
std::string own_v2_cgroup(std::string_view proc_self_cgroup, std::string_view mountinfo);

// The cgroup version node cgroups use: `forced` ("1" or "2", from CHAOSBENCH_CGROUP_VERSION)
// when it names one the host has; else 1 where a controller node cgroups ask for is on a
// v1 hierarchy, 2 where there is a cgroup2 hierarchy; 0 when there is neither.
int node_cgroup_version(bool controller_on_v1, bool have_v2, std::string_view forced);

// How node cgroups get v2 controllers (cpu, memory: `wanted`) from the harness's own
// cgroup `base`, given its cgroup.controllers and cgroup.subtree_control, whether it is
// the hierarchy's root (no cgroup.type: exempt from the no-internal-processes rule) and
// whether processes other than the harness are in it. Pure.
struct V2ControllerPlan {
  std::vector<std::string> enable;          // in chaosbench-<run_id>/cgroup.subtree_control
  std::vector<std::string> enable_in_base;  // in base's cgroup.subtree_control first
  bool move_harness = false;                // into chaosbench-<run_id>/harness before that
  std::map<std::string, std::string> why_missing;  // wanted controllers it cannot have
};
V2ControllerPlan plan_v2_controllers(const std::vector<std::string>& wanted, const std::string& base,
                                     std::string_view base_controllers, std::string_view base_subtree_control,
                                     bool base_is_root, bool others_in_base);

class NodeCgroups {
 public:
  // Creates the node cgroups for each of `controllers` the host has, v1 or v2 as
  // node_cgroup_version() says. The runner asks for freezer and pids always (pause, kill:
  // cost nothing) and for cpu or memory only when a fault needs them: CFS group scheduling
  // alone costs a collective ~5% of its bandwidth on an oversubscribed machine. When
  // cgroups cannot be made (not root, no hierarchy), available() is false and why_not()
  // says why.
  NodeCgroups(int nodes, const std::string& run_id, Journal& journal, const std::vector<std::string>& controllers);
  // cgroup v2 below `v2_base`, a cgroup2 directory taken as the harness's own cgroup
  // (tests pass the root of a cgroup2 mount of their own).
  NodeCgroups(int nodes, const std::string& run_id, Journal& journal, const std::vector<std::string>& controllers,
              const std::string& v2_base);
  ~NodeCgroups();  // undoes everything through the journal (killing leftovers), newest first
  NodeCgroups(const NodeCgroups&) = delete;
  NodeCgroups& operator=(const NodeCgroups&) = delete;

  bool available() const { return !dirs_.empty(); }
  const std::string& why_not() const { return why_not_; }
  // 1 or 2: how faults read dir()'s directories (faults::ResolvedTarget::cgroup_version).
  int version() const { return version_; }
  // Why `controller` has no directory while available(): v1 "that controller is not
  // mounted"; v2 the reason plan_v2_controllers() or the kernel gave.
  std::string why_missing(const std::string& controller) const;

  // Moves `pid` into node `node`'s cgroups. Throws std::runtime_error on failure.
  void join(int node, pid_t pid) const;

  // The node's directory for `controller` ("cpu", "memory", "freezer", "pids"), or "".
  // On v2 every controller the node has names the same directory.
  std::string dir(int node, const std::string& controller) const;

 private:
  void make_v1(int nodes, const std::string& run_id, const std::vector<std::string>& controllers,
               const std::map<std::string, std::string>& own);
  void make_v2(int nodes, const std::string& run_id, const std::vector<std::string>& controllers,
               const std::string& base);
  // Journals the directory, then makes it. Throws std::runtime_error.
  void make_dir(const std::string& path);
  // Journals moving this process back to `base`, then moves it into the new leaf `leaf`.
  void move_into_leaf(const std::string& leaf, const std::string& base);
  // Journals turning `controllers` off again, then turns them on in dir's subtree_control.
  // `own_child`: set when `dir` is shared (the cgroup chaosbench-<run id> lives in); its
  // undo then leaves the controllers on while any other cgroup is below `dir`.
  void enable_controllers(const std::string& dir, const std::vector<std::string>& controllers,
                          const std::string& own_child = "");

  Journal& journal_;
  int version_ = 1;
  std::string why_not_;
  std::map<std::string, std::string> why_missing_;
  // controller -> per node directory
  std::map<std::string, std::vector<std::string>> dirs_;
  std::vector<std::uint64_t> entries_;  // journal ids, in creation order
};

}  // namespace chaosbench::harness

// cgroup controllers the node faults need (cpu, memory, freezer, pids), judged on the
// version node cgroups will use here (harness/cluster/node_cgroups.h: v1 hierarchies, or
// the v2 one under this process's own cgroup), from /proc/self/mountinfo, /proc/cgroups
// and the own v2 cgroup's files. Judging is pure; probe_cgroups() reads the real files.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/cluster/mountinfo.h"
#include "harness/doctor/host_probe.h"

namespace chaosbench::harness {

struct CgroupInputs {
  std::vector<MountEntry> mounts;
  std::string proc_cgroups;       // /proc/cgroups text; empty when absent
  // This process's own v2 cgroup (own_v2_cgroup()); empty: the cgroup2 mount's root.
  std::string v2_own_dir;
  std::string v2_controllers;     // its cgroup.controllers; empty when none
  std::string v2_subtree_control; // its cgroup.subtree_control
  bool v2_own_is_root = false;    // no cgroup.type: the hierarchy's root
  bool v2_others_in_own = false;  // other processes share it (v2 cannot hand on controllers)
  bool v2_core_freezer = false;   // kernel >= 5.2: cgroup.freeze in every non-root v2 group
  std::string forced_version;     // CHAOSBENCH_CGROUP_VERSION
  std::function<bool(const std::string&)> writable;  // may this process create groups there?
};

// "cgroup.mode" (the hierarchies, the v2 controllers there are, and the version node
// cgroups use) then "cgroup.cpu", "cgroup.memory", "cgroup.freezer", "cgroup.pids".
std::vector<Capability> assess_cgroups(const CgroupInputs& inputs);

std::vector<Capability> probe_cgroups(const std::string& kernel_release);

}  // namespace chaosbench::harness

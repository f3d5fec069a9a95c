// cgroup controllers the node faults need (cpu, memory, freezer, pids), on v1 hierarchies
// or the unified v2 one, from /proc/self/mountinfo, /proc/cgroups and cgroup.controllers.
// Parsing and judging are pure; probe_cgroups() reads the real files.
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
  std::string proc_cgroups;     // /proc/cgroups text; empty when absent
  std::string v2_controllers;   // cgroup.controllers of the first cgroup2 mount; empty when none
  bool v2_core_freezer = false; // kernel >= 5.2: cgroup.freeze in every non-root v2 group
  std::function<bool(const std::string&)> writable;  // may this process create groups there?
};

// "cgroup.mode" then "cgroup.cpu", "cgroup.memory", "cgroup.freezer", "cgroup.pids".
std::vector<Capability> assess_cgroups(const CgroupInputs& inputs);

std::vector<Capability> probe_cgroups(const std::string& kernel_release);

}  // namespace chaosbench::harness

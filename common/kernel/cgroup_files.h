// cgroup v1 and v2 spell the same node settings differently: v1 has a directory per
// controller (freezer.state, cpu.cfs_quota_us, memory.limit_in_bytes), v2 one directory
// per node (cgroup.freeze, cpu.max, memory.max). Node faults and the runner name the
// setting (a CgroupKnob) and ask here for the file and the values, so each fault is
// written once for both. Pure functions: unit-tested without root or a v2 host.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace chaosbench::common {

enum class CgroupKnob {
  kFreeze,       // request a freeze or thaw:     freezer.state      | cgroup.freeze
  kFreezeState,  // whether the freeze is done:   freezer.state      | cgroup.events
  kCpuQuota,     // the CPU bandwidth limit:      cpu.cfs_quota_us   | cpu.max
  kMemoryLimit,  // the hard memory limit:        memory.limit_in_bytes | memory.max
  kOomEvents,    // OOM kills so far:             memory.oom_control | memory.events
};

// The knob's file in a node's directory for cgroup `version` (1 or 2).
std::string_view cgroup_file(int version, CgroupKnob knob);

// The backend a fault acting through `knob` names in results: v1 "freezer cgroup",
// "cpu cgroup (CFS quota)", "memory cgroup" (what `chaosbench doctor` lists); v2 says so.
std::string_view cgroup_backend(int version, CgroupKnob knob);

// What to write to kFreeze: v1 "FROZEN" / "THAWED", v2 "1" / "0".
std::string_view freeze_value(int version, bool frozen);
// Whether kFreeze's content asks for a freeze (v1: FREEZING or FROZEN; v2: "1").
bool freeze_requested(int version, std::string_view freeze_text);
// Whether kFreezeState's content says every task is frozen (v1: "FROZEN"; v2: a line
// "frozen 1" in cgroup.events).
bool freeze_done(int version, std::string_view state_text);

// The CFS quota for `cpus` CPUs in a period of `period_us`: cpus x period, at least the
// kernel's minimum of 1 ms. v1 writes it alone to cpu.cfs_quota_us.
long long cpu_quota_us(double cpus, long long period_us);
// v2 cpu.max for `cpus`, keeping the period of its current content ("max 100000" ->
// "20000 100000" for 0.2); 100000 when the content names none.
std::string cpu_max_value(double cpus, std::string_view current_cpu_max);

// The count on the line "oom_kill N" of memory.oom_control (v1) or memory.events (v2).
std::optional<long long> oom_kill_count(std::string_view events_text);

}  // namespace chaosbench::common

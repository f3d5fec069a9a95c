// What a node's cgroups say of it: whether it is frozen (node.pause's freezer) and whether
// the kernel's OOM killer has killed something in it (node.memory_limit). Read from the
// cgroup files, v1 or v2 (common/kernel/cgroup_files.h). Used by the local site and by agents.
// Threads: any.
#pragma once

namespace chaosbench::harness {

class NodeCgroups;

// v1 freezer.state not THAWED, v2 cgroup.freeze 1. False without a freezer directory.
bool node_frozen(const NodeCgroups& cgroups, int node);
// "oom_kill N" > 0 in v1 memory.oom_control, v2 memory.events. False without memory.
bool node_oom_killed(const NodeCgroups& cgroups, int node);

}  // namespace chaosbench::harness

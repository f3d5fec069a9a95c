// What a fault acts on, resolved by the runner from the scenario's target form into the
// live things this run created: node indices, ranks, their processes, links, groups.
// Later cluster backends add their handles here (namespaces, interfaces, cgroups).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <sys/types.h>
#include <utility>
#include <vector>

namespace chaosbench::faults {

class NetworkPlane;

// The target forms a scenario may use; a fault type lists those it accepts.
enum class TargetForm : std::uint32_t {
  kAll = 1u << 0,
  kNodes = 1u << 1,
  kRanks = 1u << 2,
  kRandom = 1u << 3,
  kPercent = 1u << 4,
  kLinks = 1u << 5,
  kGroups = 1u << 6,
};

constexpr std::uint32_t operator|(TargetForm a, TargetForm b) {
  return static_cast<std::uint32_t>(a) | static_cast<std::uint32_t>(b);
}
constexpr std::uint32_t operator|(std::uint32_t a, TargetForm b) { return a | static_cast<std::uint32_t>(b); }
constexpr bool accepts(std::uint32_t forms, TargetForm f) { return (forms & static_cast<std::uint32_t>(f)) != 0; }

std::string_view to_string(TargetForm f);  // "all", "nodes", ...

struct ResolvedTarget {
  std::vector<int> nodes;                 // node indices
  std::vector<int> ranks;                 // ranks on those nodes (or the ranks named)
  std::vector<pid_t> pids;                // the processes of those ranks, as now running
  std::vector<std::uint64_t> pid_start_times;  // parallel to pids (/proc/PID/stat field 22)
  std::vector<std::pair<int, int>> links; // node pairs
  std::vector<std::vector<int>> groups;   // partitions
  // controller ("cpu", "memory", "freezer", "pids") -> the targeted nodes' cgroup
  // directories; empty when the run has no node cgroups (then pids are all there is).
  std::map<std::string, std::vector<std::string>> cgroups;
  // The run's namespaces, addresses and shared network state; null on a local cluster.
  NetworkPlane* network = nullptr;
  // How to read those directories: 1, a directory per controller (freezer.state, ...);
  // 2, each node's one directory under every controller name it has (cgroup.freeze,
  // cpu.max, ...). Faults take the file names from common/kernel/cgroup_files.h.
  int cgroup_version = 1;
  // The run's fault control directory (common/gpu/control_block.h): rank R's block is
  // <control_dir>/rank<R>.ctl. Empty when the run has none.
  std::string control_dir;

  // "node1", "node2", "rank3", "node0<->node1": names results.json lists as targets.
  std::vector<std::string> names() const;
};

// The control file of `rank` in the run's control directory (ResolvedTarget::control_dir):
// <control_dir>/rank<R>.ctl. The runner creates it before the rank starts; GPU faults
// arm it.
std::string control_path(const std::string& control_dir, int rank);

}  // namespace chaosbench::faults

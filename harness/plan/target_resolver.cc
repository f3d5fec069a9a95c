#include "harness/plan/target_resolver.h"

#include <algorithm>
#include <cmath>

#include "harness/cluster/node_cgroups.h"
#include "harness/journal/process_identity.h"
#include "harness/plan/schedule_plan.h"

namespace chaosbench::harness {

faults::ResolvedTarget resolve_target(const TargetSpec& target, const ClusterSpec& cluster,
                                      const std::vector<RankProcess>& ranks, std::uint64_t seed,
                                      std::size_t fault_index, const NodeCgroups* cgroups) {
  using faults::TargetForm;
  faults::ResolvedTarget out;
  // Occurrence 1's pick; the schedule draws later occurrences' (schedule_plan.h).
  auto pick = [&](int count) { return pick_nodes(cluster.nodes, count, seed, fault_index, 1); };
  switch (target.form) {
    case TargetForm::kAll:
      for (int n = 0; n < cluster.nodes; ++n) out.nodes.push_back(n);
      break;
    case TargetForm::kNodes: out.nodes = target.indices; break;
    case TargetForm::kRanks: out.ranks = target.indices; break;
    case TargetForm::kRandom: out.nodes = pick(target.count); break;
    case TargetForm::kPercent:
      out.nodes = pick(static_cast<int>(std::ceil(target.percent.fraction() * cluster.nodes)));
      break;
    case TargetForm::kLinks:
      out.links = target.links;
      for (const auto& [a, b] : target.links) {
        for (int n : {a, b})
          if (std::find(out.nodes.begin(), out.nodes.end(), n) == out.nodes.end()) out.nodes.push_back(n);
      }
      break;
    case TargetForm::kGroups:
      out.groups = target.groups;
      for (const auto& g : target.groups) out.nodes.insert(out.nodes.end(), g.begin(), g.end());
      break;
  }
  // Ranks and pids follow from the nodes (or the ranks named).
  bool by_rank = target.form == TargetForm::kRanks;
  for (const auto& r : ranks) {
    bool hit = by_rank ? std::find(out.ranks.begin(), out.ranks.end(), r.rank) != out.ranks.end()
                       : std::find(out.nodes.begin(), out.nodes.end(), r.node) != out.nodes.end();
    if (!hit) continue;
    if (!by_rank) out.ranks.push_back(r.rank);
    if (r.pid > 0) {
      auto st = read_proc_stat(r.pid);
      out.pids.push_back(r.pid);
      out.pid_start_times.push_back(st ? st->start_time : 0);
    }
  }
  if (cgroups && cgroups->available()) {
    out.cgroup_version = cgroups->version();
    for (const char* controller : {"cpu", "memory", "freezer", "pids"}) {
      for (int n : out.nodes) {
        auto dir = cgroups->dir(n, controller);
        if (!dir.empty()) out.cgroups[controller].push_back(dir);
      }
    }
  }
  return out;
}

}  // namespace chaosbench::harness

#include "faults/network/partition_fault.h"

#include <fmt/format.h>

#include "faults/network/traffic_flows.h"

namespace chaosbench::faults {

void PartitionFault::do_apply(const ResolvedTarget& target) {
  plane_ = target.network;
  if (!plane_) throw FaultError("network faults need the cluster in network namespaces (root; see chaosbench doctor)");
  std::vector<std::string> rules;
  for (const auto& f : partition_flows(target, one_way_)) rules.push_back(plane_->match(f.sender, f.receiver) + " -j DROP");
  if (rules.empty()) throw FaultError("the partition cuts nothing (one group, or a node with no other node)");
  chains_.push_back(plane_->add_bridge_chain(rules, log()));
}

void PartitionFault::do_revert() { undo_all(chains_, [&](auto& c) { plane_->remove_chain(c); }); }

}  // namespace chaosbench::faults

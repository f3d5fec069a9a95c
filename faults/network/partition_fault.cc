#include "faults/network/partition_fault.h"

#include <fmt/format.h>

#include "faults/network/traffic_flows.h"

namespace chaosbench::faults {

void PartitionFault::do_apply(const ResolvedTarget& target) {
  plane_ = target.network;
  if (!plane_) throw FaultError("network faults need the cluster in network namespaces (root; see chaosbench doctor)");
  const auto flows = partition_flows(target, one_way_);
  if (flows.empty()) throw FaultError("the partition cuts nothing (one group, or a node with no other node)");
  std::vector<std::string> rules;
  if (!plane_->host_mode()) {
    for (const auto& f : flows) rules.push_back(plane_->match(f.sender, f.receiver) + " -j DROP");
    chains_.push_back(plane_->add_bridge_chain(rules, log()));
    return;
  }
  // This host drops what it sends across the cut; the other side's hosts drop theirs.
  for (const auto& f : host_share(flows, plane_->local_node(), plane_->nodes()))
    rules.push_back(plane_->match(f.sender, f.receiver) + " -j DROP");
  if (!rules.empty()) chains_.push_back(plane_->add_host_chain(rules, log()));
}

void PartitionFault::do_revert() { undo_all(chains_, [&](auto& c) { plane_->remove_chain(c); }); }

}  // namespace chaosbench::faults

#include "faults/network/partition_fault.h"

#include <fmt/format.h>
#include <map>

#include "faults/network/traffic_flows.h"

namespace chaosbench::faults {

void PartitionFault::do_apply(const ResolvedTarget& target) {
  plane_ = target.network;
  if (!plane_) throw FaultError("network faults need the cluster in network namespaces (root; see chaosbench doctor)");
  std::map<int, std::vector<std::string>> rules;  // receiver -> rules
  for (const auto& f : by_receiver(partition_flows(target, one_way_), plane_->nodes())) {
    std::string match = fmt::format("-i {}", plane_->node_interface());
    if (f.sender != kAnyNode) match += fmt::format(" -s {}", plane_->node(f.sender).address);
    rules[f.receiver].push_back(match + " -j DROP");
  }
  if (rules.empty()) throw FaultError("the partition cuts nothing (one group, or a node with no other node)");
  try {
    for (const auto& [receiver, lines] : rules)
      chains_.push_back(plane_->add_input_chain(plane_->node(receiver).netns_fd, lines, log()));
  } catch (const std::exception& e) {
    try {
      do_revert();
    } catch (...) {
    }
    throw FaultError(e.what());
  }
}

void PartitionFault::do_revert() {
  std::string errors;
  for (auto& c : chains_) {
    try {
      plane_->remove_input_chain(c);
    } catch (const std::exception& e) {
      errors += std::string(errors.empty() ? "" : "; ") + e.what();
    }
  }
  chains_.clear();
  if (!errors.empty()) throw FaultError(errors);
}

}  // namespace chaosbench::faults

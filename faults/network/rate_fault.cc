#include "faults/network/rate_fault.h"

#include <fmt/format.h>

namespace chaosbench::faults {

RateFault::RateFault(std::uint64_t bits_per_second, std::uint64_t burst_bytes, Direction direction)
    : bits_per_second_(bits_per_second), burst_bytes_(burst_bytes), direction_(direction) {}

void RateFault::do_apply(const ResolvedTarget& target) {
  plane_ = target.network;
  if (!plane_) throw FaultError("network faults need the cluster in network namespaces (root; see chaosbench doctor)");
  const auto flows = target_flows(target, direction_);
  if (flows.empty()) throw FaultError("the target names no traffic between two nodes");
  // A failure halfway is rolled back by Fault::apply: do_revert removes shapes_.
  if (plane_->host_mode()) {
    // This host's own sending only, one class per job peer (an empty share places none).
    for (const auto& f : host_share(flows, plane_->local_node(), plane_->nodes()))
      shapes_.push_back(plane_->add_host_shape(f.receiver, limit(), log()));
    return;
  }
  for (const auto& f : flows) {
    ShapeRule rule = limit();
    if (f.sender != kAnyNode) {
      if (f.receiver != kAnyNode) rule.match_dst = plane_->node(f.receiver).address;
      shapes_.push_back(plane_->add_shape(plane_->node(f.sender).netns_fd, plane_->node_interface(), rule, log()));
    } else {
      shapes_.push_back(plane_->add_shape(plane_->bridge_netns_fd(), plane_->node(f.receiver).bridge_port, rule, log()));
    }
  }
}

ShapeRule RateFault::limit() const {
  ShapeRule rule;
  rule.rate_bytes_per_s = bits_per_second_ / 8;
  rule.burst_bytes = static_cast<std::uint32_t>(burst_bytes_);
  return rule;
}

void RateFault::do_revert() { undo_all(shapes_, [&](const auto& s) { plane_->remove_shape(s); }); }

}  // namespace chaosbench::faults

#include "faults/network/traffic_flows.h"

#include <algorithm>
#include <set>

namespace chaosbench::faults {

std::optional<Direction> parse_direction(std::string_view text) {
  if (text == "egress") return Direction::kEgress;
  if (text == "ingress") return Direction::kIngress;
  if (text == "both") return Direction::kBoth;
  return std::nullopt;
}

std::vector<Flow> target_flows(const ResolvedTarget& target, Direction direction) {
  std::set<Flow> out;
  const bool egress = direction != Direction::kIngress, ingress = direction != Direction::kEgress;
  if (!target.links.empty()) {
    for (const auto& [a, b] : target.links) {
      if (egress) out.insert({a, b});
      if (ingress) out.insert({b, a});
    }
  } else {
    for (int n : target.nodes) {
      if (egress) out.insert({n, kAnyNode});
      if (ingress) out.insert({kAnyNode, n});
    }
  }
  return {out.begin(), out.end()};
}

std::vector<Flow> partition_flows(const ResolvedTarget& target, bool one_way) {
  std::set<Flow> out;
  if (!target.groups.empty()) {
    for (std::size_t i = 0; i < target.groups.size(); ++i) {
      for (std::size_t j = 0; j < target.groups.size(); ++j) {
        if (i == j || (one_way && i != 0)) continue;
        for (int a : target.groups[i])
          for (int b : target.groups[j]) out.insert({a, b});
      }
    }
  } else if (!target.links.empty()) {
    for (const auto& [a, b] : target.links) {
      out.insert({a, b});
      if (!one_way) out.insert({b, a});
    }
  } else {
    for (int n : target.nodes) {
      out.insert({n, kAnyNode});
      if (!one_way) out.insert({kAnyNode, n});
    }
  }
  return {out.begin(), out.end()};
}

std::vector<Flow> by_receiver(const std::vector<Flow>& flows, int node_count) {
  std::set<int> any_sender;
  for (const auto& f : flows)
    if (f.sender == kAnyNode && f.receiver != kAnyNode) any_sender.insert(f.receiver);
  std::set<Flow> out;
  auto add = [&](int sender, int receiver) {
    if (sender == receiver) return;
    if (any_sender.count(receiver)) sender = kAnyNode;
    out.insert({sender, receiver});
  };
  for (const auto& f : flows) {
    if (f.receiver != kAnyNode) {
      add(f.sender, f.receiver);
    } else {
      for (int r = 0; r < node_count; ++r) add(f.sender, r);
    }
  }
  return {out.begin(), out.end()};
}

namespace {

// The flows with `local` at its near end (the sender's end when `sending`, else the
// receiver's), the far end a job peer: what host_share and host_receive_share give.
std::vector<Flow> local_share(const std::vector<Flow>& flows, int local, int node_count, bool sending) {
  std::set<Flow> out;
  auto add = [&](int peer) { out.insert(sending ? Flow{local, peer} : Flow{peer, local}); };
  for (const auto& f : flows) {
    const int near = sending ? f.sender : f.receiver, far = sending ? f.receiver : f.sender;
    if ((near != local && near != kAnyNode) || far == local) continue;
    if (far != kAnyNode) {
      add(far);
      continue;
    }
    for (int peer = 0; peer < node_count; ++peer)
      if (peer != local) add(peer);
  }
  return {out.begin(), out.end()};
}

}  // namespace

std::vector<Flow> host_share(const std::vector<Flow>& flows, int local, int node_count) {
  return local_share(flows, local, node_count, true);
}

std::vector<Flow> host_receive_share(const std::vector<Flow>& flows, int local, int node_count) {
  return local_share(flows, local, node_count, false);
}

}  // namespace chaosbench::faults

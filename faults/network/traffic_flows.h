// Which packets a network fault acts on, as directed flows between nodes. A fault on a
// node or a link names traffic; this turns it into (sender, receiver) pairs that the
// backends place:
//   - impairments (delay, loss, corruption, ...) and drops between the two namespaces
//     (the bridge's FORWARD hook, or the receiver's bridge port for netem), so the
//     sender's TCP stack is not throttled by its own packets held in a queue, the
//     receiver sees the effect, and each packet is acted on once whatever the backend;
//   - rate limits on the sending side (a slow NIC pushes back on its sender), or on the
//     receiver's bridge port when the sender is "any node" (ingress shaping).
// On a host of a job (NetworkPlane::for_host) there is no bridge: each host places its
// own share of the flows, the ones it sends (host_share) for netem, rate and partition on
// its own egress, or the ones it receives (host_receive_share) for the delay line on its
// own INPUT hook.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "faults/target.h"

namespace chaosbench::faults {

// egress: traffic the node sends (for a link [a, b]: a -> b); ingress: traffic it
// receives (b -> a); both.
enum class Direction { kEgress, kIngress, kBoth };
std::optional<Direction> parse_direction(std::string_view text);

constexpr int kAnyNode = -1;

struct Flow {
  int sender = kAnyNode;
  int receiver = kAnyNode;
  bool operator==(const Flow&) const = default;
  bool operator<(const Flow& o) const { return sender != o.sender ? sender < o.sender : receiver < o.receiver; }
};

// The flows of a node or link target in `direction`: a node X gives X -> any (egress) and
// any -> X (ingress); a link [a, b] gives a -> b and b -> a. Sorted, without duplicates.
std::vector<Flow> target_flows(const ResolvedTarget& target, Direction direction);

// The flows of a partition: isolating nodes cuts X -> any and any -> X; groups cut every
// pair across groups; links cut a <-> b. one_way keeps only the first side's sending
// (X -> any; the first group to the others; a -> b).
std::vector<Flow> partition_flows(const ResolvedTarget& target, bool one_way);

// Flows with a concrete receiver, as the receiving side sees them: X -> any becomes
// X -> r for every other node r. A receiver with an any-sender flow keeps only that one.
std::vector<Flow> by_receiver(const std::vector<Flow>& flows, int node_count);

// The flows node `local` sends, as it places them on its own egress in host mode: X -> Y
// with X == `local`. A sender that is any node is read as `local`, except toward `local`
// itself (every other host places that flow as its own sending); a receiver that is any
// node becomes every other of the job's `node_count` nodes, never "anything", so traffic
// to an address outside the job is untouched. Every host of a job applies the same fault,
// so the shares of all hosts together are `flows`. Sorted, without duplicates; empty when
// `local` sends none of them.
std::vector<Flow> host_share(const std::vector<Flow>& flows, int local, int node_count);

// The flows node `local` receives, as it places them on its own INPUT hook in host mode:
// X -> Y with Y == `local`. A receiver that is any node is read as `local`, except from
// `local` itself (every other host places that flow as its own receiving); a sender that
// is any node becomes every other of the job's `node_count` nodes, never "anything", so
// traffic from an address outside the job is untouched. As with host_share, the shares of
// all hosts together are `flows`. Sorted, without duplicates; empty when `local`
// receives none of them.
std::vector<Flow> host_receive_share(const std::vector<Flow>& flows, int local, int node_count);

}  // namespace chaosbench::faults

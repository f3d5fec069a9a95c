// network.rate: a rate limit (htb class through libnl) on the target's flows. A flow with a
// known sender is limited on the sender's own interface, matching the receiver (a slow
// NIC pushes back on the sending socket, as a real one does); "any node -> X" (ingress)
// is limited on X's bridge port, the egress toward X. Works without netem.
// On a host of a job (NetworkPlane::host_mode): on the host's egress, one class per job
// peer it sends to (host_share), so a node's egress to every node is `rate` toward each
// peer, not `rate` in all as on the bridge's one class per sender.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "faults/fault.h"
#include "faults/network/network_plane.h"
#include "faults/network/traffic_flows.h"

namespace chaosbench::faults {

class RateFault : public Fault {
 public:
  RateFault(std::uint64_t bits_per_second, std::uint64_t burst_bytes, Direction direction);
  std::string backend() const override { return "htb"; }

 private:
  void do_apply(const ResolvedTarget& target) override;
  void do_revert() override;
  ShapeRule limit() const;  // the rate and burst, matching everything

  std::uint64_t bits_per_second_, burst_bytes_;
  Direction direction_;
  NetworkPlane* plane_ = nullptr;
  std::vector<NetworkPlane::ShapeHandle> shapes_;
};

}  // namespace chaosbench::faults

// network.partition: packets across the cut are dropped where they cross the bridge, by
// an iptables chain of the run's own on the bridge namespace's FORWARD hook (one
// iptables-restore: all of the rules or none). Isolating nodes, splitting
// into groups or cutting links; symmetric, or one_way (only the first side's sending).
// One chain per fault and node, removed as a whole: a partition applied twice and
// reverted once can never leave the network cut (Chaos Mesh issue 763).
// On a host of a job (NetworkPlane::host_mode): the chain is in the host's own filter
// table, jumped to from OUTPUT, and drops only what this host sends across the cut
// (`-s <this host> -d <peer> -j DROP`, host_share); each other host drops its own side.
#pragma once

#include <string>
#include <vector>

#include "faults/fault.h"
#include "faults/network/network_plane.h"

namespace chaosbench::faults {

class PartitionFault : public Fault {
 public:
  explicit PartitionFault(bool one_way) : one_way_(one_way) {}
  std::string backend() const override { return "iptables"; }

 private:
  void do_apply(const ResolvedTarget& target) override;
  void do_revert() override;

  bool one_way_;
  NetworkPlane* plane_ = nullptr;
  std::vector<NetworkPlane::ChainHandle> chains_;
};

}  // namespace chaosbench::faults

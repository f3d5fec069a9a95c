// Which backend each fault family and the cluster would use, derived from the probed
// capabilities alone (no system access), so the rules are testable with made-up reports.
// What each fault type can use and needs comes from the fault registry (each row's
// BackendChoice, faults/backend_choice.h); this file only judges it against the host.
#pragma once

#include <vector>

#include "harness/doctor/host_probe.h"

namespace chaosbench::harness {

// One entry per family, in the registry's backend_choices() order: marker,
// network.delay/loss/corrupt/reorder/duplicate/rate/partition, node.kill, rank.kill,
// process.signal, node.pause/cpu_throttle/memory_limit, "gpu.*, collective.*".
std::vector<FaultBackend> derive_fault_backends(const std::vector<Capability>& capabilities);

struct ClusterChoice {
  std::string mode;    // "network namespaces" or "local processes"
  std::string detail;  // why
};

// Network namespaces need CAP_NET_ADMIN + CAP_SYS_ADMIN, a working unshare(CLONE_NEWNET)
// and `ip`; veth and bridge must not be known missing (unknown is accepted and said).
ClusterChoice derive_cluster(const std::vector<Capability>& capabilities);

// Fills `impact` of every capability that is not ok from the derived backends and cluster
// ("network.delay/loss/corrupt/duplicate/reorder will use the nfqueue backend"), plus
// fixed notes for capabilities no backend depends on (ping, iperf3, ifb, ...).
void explain_impacts(HostReport& report);

}  // namespace chaosbench::harness

// The run's cluster network: a network namespace per node on a bridge (or, where the
// scenario or the host does not allow it, local processes on loopback), the nodes'
// hostnames, the network plane network faults act on, and cluster.link's shaping for the
// whole run. Everything it makes is journaled first (through the objects it owns).
// Threads: the run's thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "faults/fault.h"
#include "harness/cluster/netns_cluster.h"
#include "harness/cluster/node_identity.h"
#include "harness/journal/journal.h"
#include "harness/collect/timeline_log.h"
#include "harness/scenario/scenario.h"

namespace chaosbench::harness {

class ClusterNetwork {
 public:
  // Brings the network up as `cluster` asks: namespaces where the mode and the host allow
  // them, else loopback (why_local() says why). Throws HostError when namespaces are
  // required (mode "namespaces", or a cluster.link) and cannot be made. `now_s` stamps
  // the timeline events. Blocking (tens of ms for a few nodes).
  ClusterNetwork(const ClusterSpec& cluster, std::uint64_t seed, const std::string& run_id,
                 const std::string& runtime_dir, Journal& journal, TimelineLog& timeline, double now_s);
  ~ClusterNetwork();
  ClusterNetwork(const ClusterNetwork&) = delete;
  ClusterNetwork& operator=(const ClusterNetwork&) = delete;

  // Reverts cluster.link, then removes the plane and the namespaces; the node names stay
  // until destruction. Returns what could not be reverted. Idempotent.
  std::vector<std::string> shut_down();

  bool namespaced() const { return netns_ != nullptr; }
  const std::string& why_local() const { return why_local_; }
  // Node `node`'s address; "127.0.0.1" on loopback.
  std::string address(int node) const;
  // The node's namespaces for a process to enter, or -1 where there are none.
  int netns_fd(int node) const { return netns_ ? netns_->node_netns_fd(node) : -1; }
  int uts_fd(int node) const { return names_ ? names_->uts_fd(node) : -1; }
  int mnt_fd(int node) const { return names_ ? names_->mnt_fd(node) : -1; }
  // What network faults act on; null on loopback.
  faults::NetworkPlane* plane() const { return plane_.get(); }

 private:
  void name_nodes(TimelineLog& timeline);
  void shape_links(Journal& journal, TimelineLog& timeline, double now_s);

  const ClusterSpec& cluster_;
  std::uint64_t seed_;
  std::string runtime_dir_;
  std::string why_local_;
  std::unique_ptr<NetnsCluster> netns_;                 // null: local processes on loopback
  std::unique_ptr<NodeIdentity> names_;                 // with netns_: hostnames and /etc/hosts
  std::unique_ptr<faults::NetworkPlane> plane_;         // with netns_
  std::vector<std::unique_ptr<faults::Fault>> shaping_;  // cluster.link, for the whole run
};

}  // namespace chaosbench::harness

// Where a serving workload (serve, llm) puts its load generator and its replicas, and how
// the load generator reaches them: shared by their plans.
#pragma once

#include <string>
#include <vector>

#include "harness/scenario/scenario.h"
#include "harness/workloads/launch_context.h"

namespace chaosbench::harness {

template <class Workload>
int load_node_of(const Workload& w, const ClusterSpec& cluster) {
  return w.load.node >= 0 ? w.load.node : cluster.nodes - 1;
}

template <class Workload>
std::vector<int> replicas_of(const Workload& w, const ClusterSpec& cluster) {
  if (!w.replicas.empty()) return w.replicas;
  std::vector<int> out;
  for (int n = 0; n < cluster.nodes; ++n)
    if (n != load_node_of(w, cluster)) out.push_back(n);
  return out;
}

// The port replica `node` listens on: `port` in its own namespace; on a cluster of local
// processes (every node on 127.0.0.1) each replica needs a port of its own.
int replica_port(const std::vector<int>& replicas, int port, const LaunchContext& ctx, int node);

// "http://ADDR:PORT" of every replica, in replica order.
std::vector<std::string> replica_urls(const std::vector<int>& replicas, int port, const LaunchContext& ctx);

}  // namespace chaosbench::harness

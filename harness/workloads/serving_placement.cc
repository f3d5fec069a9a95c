#include "harness/workloads/serving_placement.h"

#include <algorithm>
#include <fmt/format.h>

namespace chaosbench::harness {

int replica_port(const std::vector<int>& replicas, int port, const LaunchContext& ctx, int node) {
  const bool shared_address = std::count(ctx.node_addrs.begin(), ctx.node_addrs.end(), ctx.node_addrs.front()) > 1;
  const auto at = std::find(replicas.begin(), replicas.end(), node) - replicas.begin();
  return port + (shared_address ? static_cast<int>(at) : 0);
}

std::vector<std::string> replica_urls(const std::vector<int>& replicas, int port, const LaunchContext& ctx) {
  std::vector<std::string> urls;
  for (int n : replicas)
    urls.push_back(fmt::format("http://{}:{}", ctx.node_addrs.at(static_cast<std::size_t>(n)),
                               replica_port(replicas, port, ctx, n)));
  return urls;
}

}  // namespace chaosbench::harness

#include "harness/workloads/launch_context.h"

namespace chaosbench::harness {

std::string LaunchContext::store_for(int node) const {
  const auto n = static_cast<std::size_t>(node);
  if (n < node_stores.size() && !node_stores[n].empty()) return node_stores[n];
  return "file:" + runtime_dir + "/store";
}

std::string LaunchContext::scenario_relative(const std::string& path) const {
  if (path.empty() || path.front() == '/') return path;
  return scenario_dir + "/" + path;
}

}  // namespace chaosbench::harness

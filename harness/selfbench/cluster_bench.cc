#include "harness/selfbench/cluster_bench.h"

#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <vector>

#include "common/values/percentile.h"
#include "harness/cluster/netns_cluster.h"
#include "harness/core/run_stamps.h"

namespace chaosbench::harness {

void run_cluster_bench(const ClusterBenchOptions& options, std::ostream& out) {
  std::vector<double> ms;
  for (int i = 0; i < options.repeat; ++i) {
    auto start = std::chrono::steady_clock::now();
    {
      NetnsCluster cluster(options.nodes, make_run_id());  // throws HostError (exit 3) without root
    }
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  const double median_ms = common::percentile_sorted(ms, 50);
  out << fmt::format("{{\"benchmark\":\"cluster\",\"nodes\":{},\"repeat\":{},\"median_ms\":{:.3f},\"min_ms\":{:.3f},"
                     "\"max_ms\":{:.3f}}}\n",
                     options.nodes, options.repeat, median_ms, ms.front(), ms.back());
}

}  // namespace chaosbench::harness

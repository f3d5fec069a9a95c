#include "bench/load/load_result.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "common/values/percentile.h"

namespace chaosbench::bench::load {

LatencySummary summarize_latencies(std::vector<float>& latencies_ms) {
  LatencySummary s;
  if (latencies_ms.empty()) return s;
  std::sort(latencies_ms.begin(), latencies_ms.end());
  s.p50_ms = common::percentile_sorted(latencies_ms, 50);
  s.p90_ms = common::percentile_sorted(latencies_ms, 90);
  s.p99_ms = common::percentile_sorted(latencies_ms, 99);
  s.p999_ms = common::percentile_sorted(latencies_ms, 99.9);
  s.max_ms = latencies_ms.back();
  s.mean_ms = std::accumulate(latencies_ms.begin(), latencies_ms.end(), 0.0) / static_cast<double>(latencies_ms.size());
  return s;
}

double LoadWindow::throughput() const { return static_cast<double>(completed); }

double LoadWindow::error_rate() const {
  const auto finished = completed + errors;
  return finished ? 100.0 * static_cast<double>(errors) / static_cast<double>(finished) : 0.0;
}

double LoadResult::throughput() const { return duration_s > 0 ? static_cast<double>(completed) / duration_s : 0.0; }

double LoadResult::error_rate() const {
  return issued ? 100.0 * static_cast<double>(errors) / static_cast<double>(issued) : 0.0;
}

}  // namespace chaosbench::bench::load

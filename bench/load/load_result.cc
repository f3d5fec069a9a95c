#include "bench/load/load_result.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace chaosbench::bench::load {
namespace {

double nearest_rank(std::vector<float>& sorted, double q) {
  const auto n = sorted.size();
  auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(n)));
  rank = std::clamp<std::size_t>(rank, 1, n);
  return sorted[rank - 1];
}

}  // namespace

LatencySummary summarize_latencies(std::vector<float>& latencies_ms) {
  LatencySummary s;
  if (latencies_ms.empty()) return s;
  std::sort(latencies_ms.begin(), latencies_ms.end());
  s.p50_ms = nearest_rank(latencies_ms, 0.50);
  s.p90_ms = nearest_rank(latencies_ms, 0.90);
  s.p99_ms = nearest_rank(latencies_ms, 0.99);
  s.p999_ms = nearest_rank(latencies_ms, 0.999);
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

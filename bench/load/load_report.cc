#include "bench/load/load_report.h"

#include <fmt/format.h>

namespace chaosbench::bench::load {

std::string format_load_summary(const LoadResult& r) {
  std::string out = fmt::format("load: scenario {}", r.scenario);
  if (r.target_qps > 0) out += fmt::format(", target {:.1f} req/s", r.target_qps);
  out += fmt::format(", {:.2f} s\n", r.duration_s);
  out += fmt::format("  issued {}  completed {}  errors {}  timeouts {}  failovers {}  5xx {}  connect errors {}\n",
                     r.issued, r.completed, r.errors, r.timeouts, r.failovers, r.http_errors, r.connect_errors);
  out += fmt::format("  infer/throughput {:.1f} req/s  infer/error_rate {:.3f} %\n", r.throughput(), r.error_rate());
  const auto& l = r.latency;
  out += fmt::format("  infer/latency ms  p50 {:.3f}  p90 {:.3f}  p99 {:.3f}  p99.9 {:.3f}  mean {:.3f}  max {:.3f}\n",
                     l.p50_ms, l.p90_ms, l.p99_ms, l.p999_ms, l.mean_ms, l.max_ms);
  out += "  window  req/s      err%    p50 ms   p99 ms\n";
  for (const auto& w : r.windows)
    out += fmt::format("  {:>5.0f}s {:>9.0f} {:>7.3f} {:>9.3f} {:>8.3f}\n", w.start_s, w.throughput(), w.error_rate(),
                       w.latency.p50_ms, w.latency.p99_ms);
  return out;
}

}  // namespace chaosbench::bench::load

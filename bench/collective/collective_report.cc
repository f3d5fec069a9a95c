#include "bench/collective/collective_report.h"

#include <fmt/format.h>

namespace chaosbench::bench {

double algorithm_bandwidth(std::uint64_t bytes, double time_us) {
  if (time_us <= 0) return 0;
  // bytes / (time_us * 1e-6 s) / 1e9
  return static_cast<double>(bytes) / time_us / 1e3;
}

std::string format_header(const CollectiveConfig& cfg) {
  return fmt::format(
      "# chaosbench collective benchmark: {} ranks, float32, warmup {}, iters {}, check {}\n"
      "#\n"
      "# {:>10} {:>12} {:>6} {:>15} {:>17} {:>10} {:>8} {:>8} {:>7}\n"
      "# {:>10} {:>12} {:>6} {:>15} {:>17} {:>10} {:>8} {:>8}",
      cfg.world_size, cfg.warmup_iters, cfg.iters, cfg.check ? "on" : "off",  //
      "size", "count", "type", "collective", "algorithm", "time", "algbw", "busbw", "#wrong",
      "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)");
}

std::string format_row(const SizeSummary& row) {
  const std::string wrong = row.wrong ? fmt::format("{}", *row.wrong) : std::string("N/A");
  return fmt::format("  {:>10} {:>12} {:>6} {:>15} {:>17} {:>10.1f} {:>8.3f} {:>8.3f} {:>7}",
                     row.bytes, row.elements, "float", row.collective, row.algorithm, row.time_us,
                     row.algbw, row.busbw, wrong);
}

std::string format_footer(double avg_busbw, int rows) {
  return fmt::format("# Avg bus bandwidth    : {:.3f} GB/s over {} sizes", avg_busbw, rows);
}

}  // namespace chaosbench::bench

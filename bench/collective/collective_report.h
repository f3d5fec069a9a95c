// The benchmark's human-readable log: one nccl-tests style line per size and a footer.
// Pure formatting of plain values (no I/O, no gloo), so it is testable and never mixed
// with the metrics records the harness reads. The harness does not parse these lines.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "bench/collective/collective_config.h"

namespace chaosbench::bench {

// One size of one collective, as rank 0 prints it.
struct SizeSummary {
  std::string_view collective;
  std::string_view algorithm;
  std::uint64_t bytes = 0;     // actual bytes, after rounding to whole elements per rank
  std::uint64_t elements = 0;  // float32 elements in that buffer
  double time_us = 0;          // mean time per op, averaged over ranks
  double algbw = 0;            // GB/s, GB = 10^9
  double busbw = 0;            // GB/s, algbw * bus_bandwidth_factor
  std::optional<std::uint64_t> wrong;  // over all ranks; nullopt when not checked
};

// algbw in GB/s (10^9 bytes/s, as nccl-tests doc/PERFORMANCE.md): bytes / time.
double algorithm_bandwidth(std::uint64_t bytes, double time_us);

// Lines end without a newline.
std::string format_header(const CollectiveConfig& cfg);
std::string format_row(const SizeSummary& row);
std::string format_footer(double avg_busbw, int rows);

}  // namespace chaosbench::bench

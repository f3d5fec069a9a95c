#include "bench/collective/collective_sizes.h"

#include <fmt/format.h>

namespace chaosbench::bench {

std::vector<std::uint64_t> size_sweep(std::uint64_t min_bytes, std::uint64_t max_bytes,
                                      std::uint64_t factor) {
  std::vector<std::uint64_t> sizes;
  if (min_bytes == 0 || factor < 2) return sizes;
  for (std::uint64_t b = min_bytes; b <= max_bytes; b *= factor) {
    sizes.push_back(b);
    if (b > max_bytes / factor) break;  // the next step would overflow or pass max
  }
  return sizes;
}

std::size_t element_count(CollectiveKind kind, std::uint64_t bytes, int ranks) {
  std::size_t elements = bytes / kElementBytes;
  if ((kind == CollectiveKind::kAllgather || kind == CollectiveKind::kReduceScatter) &&
      ranks > 0) {
    elements -= elements % static_cast<std::size_t>(ranks);
  }
  return elements;
}

std::string format_bytes(std::uint64_t bytes) {
  constexpr std::uint64_t kKiB = 1024;
  constexpr std::uint64_t kMiB = kKiB * 1024;
  constexpr std::uint64_t kGiB = kMiB * 1024;
  if (bytes != 0 && bytes % kGiB == 0) return fmt::format("{}GiB", bytes / kGiB);
  if (bytes != 0 && bytes % kMiB == 0) return fmt::format("{}MiB", bytes / kMiB);
  if (bytes != 0 && bytes % kKiB == 0) return fmt::format("{}KiB", bytes / kKiB);
  return fmt::format("{}B", bytes);
}

}  // namespace chaosbench::bench

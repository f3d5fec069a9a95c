// The message sizes of a collective sweep, following nccl-tests conventions: "bytes" is
// the whole buffer (allgather: the gathered output; reduce_scatter: the full input), in
// float32 elements. Pure functions, shared by the benchmark, its report and its tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/collective/collective_kind.h"

namespace chaosbench::bench {

inline constexpr std::size_t kElementBytes = sizeof(float);

// min, min*factor, ... while <= max. Empty when min is 0, factor < 2 or min > max.
std::vector<std::uint64_t> size_sweep(std::uint64_t min_bytes, std::uint64_t max_bytes,
                                      std::uint64_t factor);

// Float elements for a requested size: whole elements only, and for allgather and
// reduce_scatter a multiple of `ranks` so that every rank has an equal share (rounded
// down, as nccl-tests does). 0 when the size is too small to run.
std::size_t element_count(CollectiveKind kind, std::uint64_t bytes, int ranks);

// "16MiB", "64KiB", "1020B": the size as a person reads it in a message.
std::string format_bytes(std::uint64_t bytes);

}  // namespace chaosbench::bench

// Milliseconds since a steady-clock instant: how the workloads time a step, a save or a
// collective for their records.
#pragma once

#include <chrono>

namespace chaosbench::bench {

inline double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace chaosbench::bench

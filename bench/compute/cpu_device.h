// The CPU device: OpenBLAS's cblas_sgemm for GEMMs, plain loops (which g++ vectorises)
// for the rest. Deterministic: the same inputs and thread count give the same bits.
#pragma once

#include <memory>

#include "bench/compute/device.h"

namespace chaosbench::bench::train {

// `threads` OpenBLAS threads (process-wide: OpenBLAS has one pool), at least 1.
std::unique_ptr<Device> make_cpu_device(int threads);

}  // namespace chaosbench::bench::train

// compute/gemm_tflops: the GEMM throughput this device reaches, the denominator of
// train/mfu. A square single-precision GEMM (n x n x n) repeated for at least
// min_seconds after one warm-up; the best repetition counts, as peak benchmarks do.
#pragma once

#include "bench/compute/device.h"

namespace chaosbench::bench::train {

// TFLOP/s (10^12 floating-point operations per second; one multiply-add is 2).
double measure_gemm_tflops(Device& device, int n = 1024, double min_seconds = 0.2);

}  // namespace chaosbench::bench::train

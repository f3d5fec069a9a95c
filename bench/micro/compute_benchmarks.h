// The compute rows of the micro-benchmark suite (docs/micro-benchmarks.md; after SuperBench):
//   compute/gemm_tflops  sgemm n=1024 through the CPU device (OpenBLAS), one thread and
//                        every hardware thread; 2n^3 FLOP per product
//   compute/mem_bw       STREAM triad a[i] = b[i] + s*c[i] over three arrays of 64 MiB of
//                        doubles, one thread and every hardware thread; counted as STREAM
//                        does: 3 x 8 bytes per element (24 B), write-allocate traffic not
//                        counted; GB = 10^9 bytes
#pragma once

#include <vector>

#include "bench/micro/micro_benchmark.h"

namespace chaosbench::bench::micro {

std::vector<MicroBenchmark> compute_benchmarks();

}  // namespace chaosbench::bench::micro

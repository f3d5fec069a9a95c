// The hardware's single-precision peak per core, measured rather than looked up: a VM's
// CPU often reports a generic model name and the TSC rate as its clock, so neither a
// table of models nor /proc/cpuinfo's "cpu MHz" can be trusted.
//
//   peak (GFLOP/s per core) = fp32 lanes x 2 (an FMA is two FLOPs) x FMA units x clock
//
// - lanes: the widest vector the CPU and the OS support (AVX-512: 16, AVX2/FMA: 8, else 4);
// - clock: timed with a chain of dependent register adds (one cycle each on every x86-64
//   core since the P6), so it is the clock the core really runs at, turbo included;
// - FMA units: cpuid does not say; an FMA throughput loop (12 independent accumulators,
//   enough to cover the latency of two units) measures FLOPs per cycle, and the count is
//   that divided by lanes x 2, rounded (at least 1.25 means two: heavy AVX-512 may lower the
//   clock below the scalar one).
// The same formula as the datasheets' (e.g. Intel's "APP" metric: cores x clock x FLOPs
// per cycle). Blocking, about 0.1 s; x86-64 only (elsewhere `known` is false). Each part is
// the best of several short windows, so a slice lost to another process does not count.
#pragma once

#include <string>

namespace chaosbench::bench::blas {

struct CpuPeak {
  bool known = false;
  int lanes = 0;              // fp32 lanes of the widest usable vector
  std::string isa;            // "avx512f", "avx2+fma", "sse"
  int fma_units = 0;          // 1 or 2 (0: no FMA; a multiply and an add then)
  double clock_ghz = 0;       // measured
  double nominal_ghz = 0;     // /proc/cpuinfo "cpu MHz", for comparison (0 when absent)
  double fma_gflops = 0;      // what the FMA loop sustained on one core
  double peak_gflops = 0;     // lanes x 2 x max(fma_units, 1) x clock_ghz, one core
  std::string formula() const;  // "16 lanes x 2 x 2 FMA units x 3.10 GHz = 198.4 GFLOP/s"
};

CpuPeak measure_cpu_peak();

}  // namespace chaosbench::bench::blas

// What the BLAS library loaded in this process does on this CPU: which kernel it picked
// (OpenBLAS decides once, when it loads, from the CPU or from OPENBLAS_CORETYPE), how fast
// single-thread SGEMM runs with it, and whether its results are right. The harness runs
// this in one subprocess per candidate kernel (`chaosbench worker blas-probe`), since the
// variable must be set before the library loads, and some OpenBLAS builds compute wrong
// results with some kernels on some CPUs.
// Blocking, about min_seconds plus the correctness products; single-threaded BLAS after it.
#pragma once

#include <optional>
#include <string>

#include "bench/blas/cpu_peak.h"

namespace chaosbench::bench::blas {

struct BlasMeasurement {
  std::string corename;  // openblas_get_corename(): "SkylakeX", "Prescott", ...
  std::string config;    // openblas_get_config(): "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY ..."
  int n = 0;             // the timed product is n x n x n
  double gflops = 0;     // best single-thread SGEMM rate over the timed repetitions
  // The largest error of any element of the checked products (row- and column-major,
  // transposed or not, odd shapes, beta 0 and not), relative to what rounding allows:
  // |c - exact| / sum_k |a_ik b_kj|, the exact value in double. About 1e-7 for a correct
  // single-precision kernel; a wrong one is off by order 1.
  double max_error = 0;
  bool correct = false;  // max_error below kMaxError and the timed product exact
};

inline constexpr double kMaxError = 1e-4;

BlasMeasurement measure_blas(int n = 1024, double min_seconds = 0.25);

// One JSON object on one line: the measurement, and the CPU's peak when given.
std::string probe_json(const BlasMeasurement& m, const std::optional<CpuPeak>& peak);

// The BLAS library this binary loaded, for telling one installation from another:
// "<path> <size> <mtime>" of the shared object that defines openblas_get_config, or ""
// when it cannot be found.
std::string blas_library_identity();

}  // namespace chaosbench::bench::blas

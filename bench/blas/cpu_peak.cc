#include "bench/blas/cpu_peak.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>

#include <fmt/format.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace chaosbench::bench::blas {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

double nominal_ghz() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("cpu MHz", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) break;
    try {
      return std::stod(line.substr(colon + 1)) / 1000.0;
    } catch (const std::exception&) {
      break;
    }
  }
  return 0;
}

#if defined(__x86_64__)

// Cycles per second of a chain of dependent register adds: each waits for the one
// before, one cycle apart; the loop's own counter runs beside the chain. Register, not
// immediate, operands: newer cores (Golden Cove on) fold chains of immediate adds at
// rename and would report several times the clock. The best of several trials: the first
// ones also bring the core up to its turbo clock.
double measure_clock_ghz() {
  constexpr std::uint64_t kIters = 100000;  // x 64 adds: about 2 ms at 3 GHz
  double best = 0;
  for (int trial = 0; trial < 12; ++trial) {
    std::uint64_t x = 0;
    const std::uint64_t one = 1;
    const auto start = Clock::now();
    for (std::uint64_t i = 0; i < kIters; ++i) asm volatile(".rept 64\n\taddq %1, %0\n\t.endr" : "+r"(x) : "r"(one));
    const double s = seconds_since(start);
    if (s > 0) best = std::max(best, 64.0 * kIters / s / 1e9);
  }
  return best;
}

// FLOPs per second of independent FMA chains on one core, for `seconds`. Twelve
// accumulators: two units of four-cycle latency need eight in flight. The loops are
// written out in each function: a lambda would not inherit its target attribute.
#define CB_FMA_RATE(fmadd, set1, vec, lanes)                                                   \
  vec acc[12];                                                                                 \
  for (int k = 0; k < 12; ++k) acc[k] = set1(1.0f + 0.001f * static_cast<float>(k));           \
  const vec m = set1(0.9999999f), a = set1(1e-7f);                                             \
  std::uint64_t rounds = 0;                                                                    \
  const auto start = Clock::now();                                                             \
  double elapsed = 0;                                                                          \
  do {                                                                                         \
    for (int i = 0; i < 1000; ++i)                                                             \
      for (auto& v : acc) v = fmadd(v, m, a);                                                  \
    rounds += 1000;                                                                            \
    elapsed = seconds_since(start);                                                            \
  } while (elapsed < seconds);                                                                 \
  alignas(64) float out[lanes];                                                                \
  volatile float sink = 0;                                                                     \
  for (const auto& v : acc) {                                                                  \
    std::memcpy(out, &v, sizeof out);                                                          \
    sink = sink + out[0];                                                                      \
  }                                                                                            \
  return static_cast<double>(rounds) * 12 * lanes * 2 / elapsed / 1e9;

__attribute__((target("avx512f"))) double fma_gflops_avx512(double seconds) {
  CB_FMA_RATE(_mm512_fmadd_ps, _mm512_set1_ps, __m512, 16)
}

__attribute__((target("avx2,fma"))) double fma_gflops_avx2(double seconds) {
  CB_FMA_RATE(_mm256_fmadd_ps, _mm256_set1_ps, __m256, 8)
}

#undef CB_FMA_RATE

#endif

}  // namespace

std::string CpuPeak::formula() const {
  if (!known) return "unknown";
  return fmt::format("{} lanes x 2 x {} FMA unit{} x {:.2f} GHz = {:.1f} GFLOP/s", lanes, std::max(fma_units, 1),
                     fma_units == 1 ? "" : "s", clock_ghz, peak_gflops);
}

CpuPeak measure_cpu_peak() {
  CpuPeak p;
  p.nominal_ghz = nominal_ghz();
#if defined(__x86_64__)
  __builtin_cpu_init();
  // __builtin_cpu_supports also checks that the OS saves the registers (XCR0).
  if (__builtin_cpu_supports("avx512f")) {
    p.lanes = 16;
    p.isa = "avx512f";
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    p.lanes = 8;
    p.isa = "avx2+fma";
  } else {
    p.lanes = 4;
    p.isa = "sse";
  }
  p.clock_ghz = measure_clock_ghz();
  // The best of several short windows, as the clock: one window can lose a slice of its
  // time to another process, and the unit count must not halve for it.
  for (int window = 0; window < 6; ++window) {
    if (p.lanes == 16) p.fma_gflops = std::max(p.fma_gflops, fma_gflops_avx512(0.01));
    if (p.lanes == 8) p.fma_gflops = std::max(p.fma_gflops, fma_gflops_avx2(0.01));
  }
  if (p.fma_gflops > 0 && p.clock_ghz > 0) {
    const double per_cycle = p.fma_gflops / p.clock_ghz / (p.lanes * 2.0);
    p.fma_units = per_cycle >= 1.25 ? 2 : 1;
  }
  p.peak_gflops = p.lanes * 2.0 * std::max(p.fma_units, 1) * p.clock_ghz;
  p.known = p.clock_ghz > 0;
#endif
  return p;
}

}  // namespace chaosbench::bench::blas

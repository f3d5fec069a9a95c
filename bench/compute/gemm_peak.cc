// The GEMM peak: n x n x n single-precision products on the device, timed one by one with
// a synchronize after each, so a GPU's asynchronous launches are timed to completion.
#include "bench/compute/gemm_peak.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <stdexcept>

namespace chaosbench::bench::train {

double measure_gemm_tflops(Device& device, int n, double min_seconds) {
  if (n < 1) throw std::invalid_argument("measure_gemm_tflops: n must be >= 1");
  const auto elements = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  // Allocations are released by this guard, also when a GEMM throws (a GPU fault hook may).
  struct Buffers {
    Device& device;
    float* a = nullptr;
    float* b = nullptr;
    float* c = nullptr;
    ~Buffers() {
      for (float* p : {a, b, c}) {
        if (p != nullptr) device.release(p);
      }
    }
  } buffers{device};
  buffers.a = device.allocate(elements);
  buffers.b = device.allocate(elements);
  buffers.c = device.allocate(elements);
  // Ordinary values: zeros could meet a zero-skipping fast path, denormals a slow one.
  device.fill(buffers.a, 0.5f, elements);
  device.fill(buffers.b, 0.25f, elements);

  const auto run_once = [&] {
    device.gemm(false, false, n, n, n, 1.0f, buffers.a, n, buffers.b, n, 0.0f, buffers.c, n);
    device.synchronize();
  };
  run_once();  // warm-up: thread pools, packing buffers, clocks, a GPU's lazy init

  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  double best = std::numeric_limits<double>::infinity();
  do {
    const auto t0 = Clock::now();
    run_once();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  } while (std::chrono::duration<double>(Clock::now() - start).count() < min_seconds);
  const double flops = 2.0 * n * static_cast<double>(n) * n;
  return flops / best / 1e12;
}

}  // namespace chaosbench::bench::train

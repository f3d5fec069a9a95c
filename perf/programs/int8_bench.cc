// int8_bench: batch compute time of the demo MLP (256-1024-1024-1024-16), fp32 (MlpModel
// on OpenBLAS, 1 thread) against the int8 model (make_int8_model), for batch 1, 16, 64
// and 256; medians over repeats, and the speedup. The weights are the trainer's seeded
// initialisation. Both wall time and this thread's CPU time are reported: on a shared
// machine other processes stretch the wall time, not the CPU time.
// Usage: int8_bench [repeats] (default 50).
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "bench/serve/int8_model.h"
#include "bench/compute/cpu_device.h"
#include "bench/compute/mlp_model.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Times {
  double wall_ms;
  double cpu_ms;
};

double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

template <typename Fn>
Times median_times(int repeats, Fn&& fn) {
  fn();  // warm-up: caches, page faults, OpenBLAS buffers
  std::vector<double> wall, cpu;
  for (int i = 0; i < repeats; ++i) {
    const auto t0 = Clock::now();
    const double c0 = thread_cpu_ms();
    fn();
    cpu.push_back(thread_cpu_ms() - c0);
    wall.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  return {median(wall), median(cpu)};
}

}  // namespace

int main(int argc, char** argv) {
  using namespace chaosbench::bench;
  const int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 50;
  const std::vector<int> layers{256, 1024, 1024, 1024, 16};
  const int max_batch = 256;
  auto device = train::make_cpu_device(1);
  train::MlpModel fp32(*device, layers, max_batch);
  fp32.init(42);
  serve::ModelWeights weights{layers, std::vector<float>(fp32.param_count())};
  device->to_host(weights.params.data(), fp32.params(), weights.params.size());
  const auto int8 = serve::make_int8_model(weights, max_batch);

  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<std::size_t>(max_batch) * layers.front());
  for (float& v : x) v = normal(rng);
  std::vector<float> y(static_cast<std::size_t>(max_batch) * layers.back());
  float* dx = device->allocate(x.size());
  device->from_host(dx, x.data(), x.size());

  std::printf("%s vs %s, median of %d\n", device->describe().c_str(), int8->describe().c_str(), repeats);
  std::printf("%6s %10s %10s %8s %10s %10s %8s %10s\n", "batch", "fp32_ms", "int8_ms", "speedup", "fp32_cpu", "int8_cpu",
              "speedup", "int8_GOP/s");
  double flops = 0;
  for (std::size_t l = 0; l + 1 < layers.size(); ++l) flops += 2.0 * layers[l] * layers[l + 1];
  for (const int batch : {1, 16, 64, 256}) {
    const Times f = median_times(repeats, [&] {
      device->to_host(y.data(), fp32.forward(dx, batch), static_cast<std::size_t>(batch) * layers.back());
    });
    const Times q = median_times(repeats, [&] { int8->infer(x.data(), batch, y.data()); });
    std::printf("%6d %10.3f %10.3f %7.2fx %10.3f %10.3f %7.2fx %10.1f\n", batch, f.wall_ms, q.wall_ms,
                f.wall_ms / q.wall_ms, f.cpu_ms, q.cpu_ms, f.cpu_ms / q.cpu_ms, flops * batch / q.cpu_ms / 1e6);
  }
  device->release(dx);
  return 0;
}

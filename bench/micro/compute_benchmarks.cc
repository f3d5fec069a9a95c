#include "bench/micro/compute_benchmarks.h"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "bench/compute/cpu_device.h"

namespace chaosbench::bench::micro {
namespace {

constexpr int kGemmN = 1024;
// 64 MiB per array: three of them are far beyond any last-level cache this code meets, so
// every iteration streams from DRAM (STREAM's rule: each array at least 4x the caches).
constexpr std::size_t kTriadElements = (64u << 20) / sizeof(double);
constexpr double kTriadScalar = 3.0;

int hardware_threads() { return std::max(1, static_cast<int>(std::thread::hardware_concurrency())); }

void gemm_body(benchmark::State& state, int threads) {
  auto device = train::make_cpu_device(threads);
  const auto elements = static_cast<std::size_t>(kGemmN) * kGemmN;
  auto release = [&device](float* p) { device->release(p); };
  using Buffer = std::unique_ptr<float, decltype(release)>;
  Buffer a(device->allocate(elements), release), b(device->allocate(elements), release),
      c(device->allocate(elements), release);
  // Ordinary values: zeros could meet a zero-skipping fast path, denormals a slow one.
  device->fill(a.get(), 0.5f, elements);
  device->fill(b.get(), 0.25f, elements);
  const auto product = [&] {
    device->gemm(false, false, kGemmN, kGemmN, kGemmN, 1.0f, a.get(), kGemmN, b.get(), kGemmN, 0.0f, c.get(), kGemmN);
    device->synchronize();
  };
  product();  // warm-up: OpenBLAS's thread pool and packing buffers
  for (auto _ : state) product();
  state.counters["FLOP"] = benchmark::Counter(2.0 * kGemmN * kGemmN * kGemmN, benchmark::Counter::kIsIterationInvariantRate);
}

// The three arrays, made (and touched) once on first use and shared by both triad rows.
class TriadArrays {
 public:
  void ensure() {
    std::call_once(once_, [this] {
      a_.assign(kTriadElements, 0.0);
      b_.assign(kTriadElements, 1.0);
      c_.assign(kTriadElements, 2.0);
    });
  }

  // One triad over [begin, end).
  void triad(std::size_t begin, std::size_t end) {
    double* __restrict a = a_.data();
    const double* __restrict b = b_.data();
    const double* __restrict c = c_.data();
    for (std::size_t i = begin; i < end; ++i) a[i] = b[i] + kTriadScalar * c[i];
  }

  // The whole triad on `threads` threads, each taking one contiguous slice.
  void triad_parallel(int threads) {
    const std::size_t slice = (kTriadElements + threads - 1) / threads;
    std::vector<std::thread> workers;
    for (int t = 1; t < threads; ++t)
      workers.emplace_back([this, t, slice] {
        triad(std::min(kTriadElements, t * slice), std::min(kTriadElements, (t + 1) * slice));
      });
    triad(0, std::min(kTriadElements, slice));
    for (auto& w : workers) w.join();
    benchmark::DoNotOptimize(a_.data());
    benchmark::ClobberMemory();
  }

 private:
  std::once_flag once_;
  std::vector<double> a_, b_, c_;
};

void triad_body(benchmark::State& state, TriadArrays& arrays, int threads) {
  arrays.ensure();
  arrays.triad_parallel(threads);  // warm-up: pages mapped, threads' caches primed
  for (auto _ : state) arrays.triad_parallel(threads);
  state.counters["bytes"] = benchmark::Counter(3.0 * sizeof(double) * kTriadElements,
                                               benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

std::vector<MicroBenchmark> compute_benchmarks() {
  std::vector<MicroBenchmark> rows;
  std::vector<int> thread_counts{1};
  if (hardware_threads() > 1) thread_counts.push_back(hardware_threads());
  for (int threads : thread_counts) {
    MicroBenchmark gemm;
    gemm.name = fmt::format("compute/gemm_tflops/threads:{}", threads);
    gemm.metric = "compute/gemm_tflops";
    gemm.labels = {{"device", "cpu"}, {"dtype", "fp32"}, {"n", std::int64_t{kGemmN}}, {"threads", std::int64_t{threads}}};
    gemm.measure = {"FLOP", 1e-12};
    gemm.body = guarded([threads](benchmark::State& state) { gemm_body(state, threads); });
    rows.push_back(std::move(gemm));
  }
  auto arrays = std::make_shared<TriadArrays>();
  for (int threads : thread_counts) {
    MicroBenchmark triad;
    triad.name = fmt::format("compute/mem_bw/threads:{}", threads);
    triad.metric = "compute/mem_bw";
    triad.labels = {{"device", "host"},
                    {"kernel", "triad"},
                    {"array_bytes", static_cast<std::int64_t>(kTriadElements * sizeof(double))},
                    {"threads", std::int64_t{threads}}};
    triad.measure = {"bytes", 1e-9};
    triad.body = guarded([arrays, threads](benchmark::State& state) { triad_body(state, *arrays, threads); });
    rows.push_back(std::move(triad));
  }
  return rows;
}

}  // namespace chaosbench::bench::micro

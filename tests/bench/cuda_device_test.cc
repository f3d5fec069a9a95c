// The CUDA device and the NCCL gradient reducer on a real GPU: every Device operation
// against the CPU device on the same random inputs (bit for bit where cpu_device.cc and
// cuda_kernels.cu compute the same expression; GEMMs within 1e-4 of the sum of the
// products' magnitudes), the MLP's gradients end to end, errors as DeviceError, and the
// reducer over 2 GPUs (or a 1-rank communicator on one). Every test skips with the
// reason where no GPU is usable (no CUDA in this build, no driver, no device).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gloo/rendezvous/hash_store.h>

#include "bench/common/device_error.h"
#include "bench/train/device_factory.h"
#include "bench/compute/mlp_model.h"

namespace cuda_device_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::bench::train;
using chaosbench::bench::DeviceError;

namespace {

bool skip_without_gpu() {
  std::string why;
  if (cuda_device_count(&why) > 0) return false;
  WARN("skipped: no CUDA device: " << why);
  return true;
}

std::vector<float> random_floats(std::size_t n, std::uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// One host vector mirrored on the CPU and the CUDA device; read() gives both back.
struct Twin {
  Twin(Device& cpu, Device& gpu, const std::vector<float>& host)
      : cpu_dev(cpu), gpu_dev(gpu), n(host.size()), c(cpu.allocate(n)), g(gpu.allocate(n)) {
    cpu.from_host(c, host.data(), n);
    gpu.from_host(g, host.data(), n);
  }
  ~Twin() {
    cpu_dev.release(c);
    gpu_dev.release(g);
  }
  Twin(const Twin&) = delete;
  Twin& operator=(const Twin&) = delete;
  std::vector<float> cpu() const { return read(cpu_dev, c); }
  std::vector<float> gpu() const { return read(gpu_dev, g); }
  std::vector<float> read(Device& d, const float* p) const {
    std::vector<float> h(n);
    d.to_host(h.data(), p, n);
    return h;
  }
  Device& cpu_dev;
  Device& gpu_dev;
  std::size_t n;
  float* c;
  float* g;
};

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Index of the first element whose bits differ, or -1.
long first_difference(const std::vector<float>& a, const std::vector<float>& b) {
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0) return static_cast<long>(i);
  return -1;
}

#define REQUIRE_SAME_BITS(a, b) \
  do {                                                                                           \
    const auto& a_ = (a);                                                                        \
    const auto& b_ = (b);                                                                        \
    const long at_ = first_difference(a_, b_);                                                   \
    INFO("first difference at " << at_ << (at_ >= 0 ? ": " + std::to_string(a_[at_]) + " vs " +  \
                                                          std::to_string(b_[at_]) : ""));        \
    REQUIRE(same_bits(a_, b_));                                                                  \
  } while (false)

}  // namespace

TEST_CASE("GPU: the CUDA device describes itself, allocates zeroed memory and copies both ways", "[cuda]") {
  if (skip_without_gpu()) return;
  auto gpu = make_device("cuda", 1);
  INFO(gpu->describe());
  REQUIRE(gpu->describe().rfind("cuda (", 0) == 0);
  REQUIRE(gpu->describe().find("cuBLAS") != std::string::npos);
  float* p = gpu->allocate(100003);
  std::vector<float> back(100003, 1.0f);
  gpu->to_host(back.data(), p, back.size());
  REQUIRE(same_bits(back, std::vector<float>(back.size(), 0.0f)));
  const auto host = random_floats(back.size(), 1);
  gpu->from_host(p, host.data(), host.size());
  gpu->to_host(back.data(), p, back.size());
  REQUIRE(same_bits(back, host));
  gpu->fill(p + 3, -2.5f, 1000);
  gpu->to_host(back.data(), p, back.size());
  REQUIRE(back[2] == host[2]);
  REQUIRE(back[3] == -2.5f);
  REQUIRE(back[1002] == -2.5f);
  REQUIRE(back[1003] == host[1003]);
  gpu->release(p);
  float* empty = gpu->allocate(0);
  gpu->release(empty);
  gpu->synchronize();
}

TEST_CASE("GPU: cuBLAS GEMMs match OpenBLAS for every transpose and stride", "[cuda]") {
  if (skip_without_gpu()) return;
  auto cpu = make_device("cpu", 1);
  auto gpu = make_device("cuda", 1);
  const int m = 37, n = 53, k = 129;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      // Stored shapes (row-major) with padded row strides.
      const int a_rows = ta ? k : m, a_cols = ta ? m : k, lda = a_cols + 3;
      const int b_rows = tb ? n : k, b_cols = tb ? k : n, ldb = b_cols + 5;
      const int ldc = n + 2;
      const auto a = random_floats(static_cast<std::size_t>(a_rows) * lda, 10 + ta);
      const auto b = random_floats(static_cast<std::size_t>(b_rows) * ldb, 20 + tb);
      const auto c0 = random_floats(static_cast<std::size_t>(m) * ldc, 30);
      Twin ta_(*cpu, *gpu, a), tb_(*cpu, *gpu, b), tc(*cpu, *gpu, c0);
      const float alpha = 0.75f, beta = -0.5f;
      cpu->gemm(ta, tb, m, n, k, alpha, ta_.c, lda, tb_.c, ldb, beta, tc.c, ldc);
      gpu->gemm(ta, tb, m, n, k, alpha, ta_.g, lda, tb_.g, ldb, beta, tc.g, ldc);
      const auto want = tc.cpu(), got = tc.gpu();
      for (int i = 0; i < m; ++i) {
        for (int j = 0; j < ldc; ++j) {
          const std::size_t at = static_cast<std::size_t>(i) * ldc + j;
          if (j >= n) {  // the padding is never written
            REQUIRE(got[at] == c0[at]);
            continue;
          }
          double magnitude = std::fabs(beta * c0[at]);
          for (int p = 0; p < k; ++p) {
            const float av = ta ? a[static_cast<std::size_t>(p) * lda + i] : a[static_cast<std::size_t>(i) * lda + p];
            const float bv = tb ? b[static_cast<std::size_t>(j) * ldb + p] : b[static_cast<std::size_t>(p) * ldb + j];
            magnitude += std::fabs(alpha * av * bv);
          }
          INFO("trans_a " << ta << " trans_b " << tb << " C[" << i << "][" << j << "]");
          REQUIRE(std::fabs(got[at] - want[at]) <= 1e-4 * magnitude);
        }
      }
    }
  }
}

TEST_CASE("GPU: element-wise ops give the CPU device's bits", "[cuda]") {
  if (skip_without_gpu()) return;
  auto cpu = make_device("cpu", 1);
  auto gpu = make_device("cuda", 1);
  const int rows = 67, cols = 301;
  const std::size_t n = static_cast<std::size_t>(rows) * cols;

  SECTION("bias_activation, with and without ReLU") {
    for (bool relu : {false, true}) {
      Twin y(*cpu, *gpu, random_floats(n, 40)), bias(*cpu, *gpu, random_floats(cols, 41));
      cpu->bias_activation(y.c, bias.c, rows, cols, relu);
      gpu->bias_activation(y.g, bias.g, rows, cols, relu);
      REQUIRE_SAME_BITS(y.gpu(), y.cpu());
    }
  }
  SECTION("relu_backward, including zeros of both signs") {
    auto out = random_floats(n, 50);
    for (std::size_t i = 0; i < n; i += 7) out[i] = (i % 2 == 0) ? 0.0f : -0.0f;
    Twin y(*cpu, *gpu, out), dy(*cpu, *gpu, random_floats(n, 51));
    cpu->relu_backward(dy.c, y.c, n);
    gpu->relu_backward(dy.g, y.g, n);
    REQUIRE_SAME_BITS(dy.gpu(), dy.cpu());
  }
  SECTION("column_sums") {
    Twin dy(*cpu, *gpu, random_floats(n, 60)), out(*cpu, *gpu, random_floats(cols, 61));
    cpu->column_sums(dy.c, rows, cols, out.c);
    gpu->column_sums(dy.g, rows, cols, out.g);
    REQUIRE_SAME_BITS(out.gpu(), out.cpu());
  }
  SECTION("squared_error: the gradient to the bit, the sum to double rounding, also in place") {
    for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{1000}, std::size_t{1234567}}) {
      for (bool in_place : {false, true}) {
        INFO(count << " elements, in place " << in_place);
        Twin pred(*cpu, *gpu, random_floats(count, 70, -3, 3)), target(*cpu, *gpu, random_floats(count, 71, -3, 3));
        Twin grad(*cpu, *gpu, std::vector<float>(count, 9.0f));
        const float scale = 1.0f / 3000.0f;
        const double want = cpu->squared_error(pred.c, target.c, count, scale, in_place ? pred.c : grad.c);
        const double got = gpu->squared_error(pred.g, target.g, count, scale, in_place ? pred.g : grad.g);
        REQUIRE(std::fabs(got - want) <= 1e-12 * std::max(1.0, want));
        REQUIRE_SAME_BITS(in_place ? pred.gpu() : grad.gpu(), in_place ? pred.cpu() : grad.cpu());
        // Deterministic: the same inputs give the same double.
        if (!in_place) REQUIRE(gpu->squared_error(pred.g, target.g, count, scale, grad.g) == got);
      }
    }
  }
  SECTION("sgd_momentum over several steps") {
    Twin p(*cpu, *gpu, random_floats(n, 80)), m(*cpu, *gpu, std::vector<float>(n, 0.0f));
    for (int step = 0; step < 4; ++step) {
      Twin g(*cpu, *gpu, random_floats(n, 81 + step, -50, 50));
      cpu->sgd_momentum(p.c, g.c, m.c, n, 0.05f, 0.9f, 1e-4f, 1.0f / 64);
      gpu->sgd_momentum(p.g, g.g, m.g, n, 0.05f, 0.9f, 1e-4f, 1.0f / 64);
    }
    REQUIRE_SAME_BITS(p.gpu(), p.cpu());
    REQUIRE_SAME_BITS(m.gpu(), m.cpu());
  }
  SECTION("adamw over several steps, bias corrections included") {
    Twin p(*cpu, *gpu, random_floats(n, 90)), m(*cpu, *gpu, std::vector<float>(n, 0.0f));
    Twin v(*cpu, *gpu, std::vector<float>(n, 0.0f));
    for (std::int64_t step = 1; step <= 5; ++step) {
      Twin g(*cpu, *gpu, random_floats(n, 91 + static_cast<std::uint32_t>(step), -50, 50));
      cpu->adamw(p.c, g.c, m.c, v.c, n, 1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, step, 1.0f / 64);
      gpu->adamw(p.g, g.g, m.g, v.g, n, 1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, step, 1.0f / 64);
    }
    REQUIRE_SAME_BITS(p.gpu(), p.cpu());
    REQUIRE_SAME_BITS(m.gpu(), m.cpu());
    REQUIRE_SAME_BITS(v.gpu(), v.cpu());
    REQUIRE_THROWS_AS(gpu->adamw(p.g, p.g, m.g, v.g, n, 1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, 0, 1.0f),
                      std::invalid_argument);
  }
}

TEST_CASE("GPU: the MLP's forward pass and gradients match the CPU device's", "[cuda]") {
  if (skip_without_gpu()) return;
  auto cpu = make_device("cpu", 1);
  auto gpu = make_device("cuda", 1);
  const std::vector<int> sizes{48, 256, 128, 10};
  const int batch = 32;
  MlpModel mc(*cpu, sizes, batch), mg(*gpu, sizes, batch);
  mc.init(7);
  mg.init(7);
  Twin x(*cpu, *gpu, random_floats(static_cast<std::size_t>(batch) * sizes.front(), 100));
  Twin y(*cpu, *gpu, random_floats(static_cast<std::size_t>(batch) * sizes.back(), 101));
  Twin dout(*cpu, *gpu, std::vector<float>(static_cast<std::size_t>(batch) * sizes.back(), 0.0f));
  const double lc = cpu->squared_error(mc.forward(x.c, batch), y.c, dout.n, 1.0f / dout.n, dout.c);
  const double lg = gpu->squared_error(mg.forward(x.g, batch), y.g, dout.n, 1.0f / dout.n, dout.g);
  REQUIRE(std::fabs(lg - lc) <= 1e-4 * lc);
  std::vector<int> order;
  mc.backward(x.c, dout.c, batch, nullptr);
  mg.backward(x.g, dout.g, batch, [&](int l) { order.push_back(l); });
  REQUIRE(order == std::vector<int>{2, 1, 0});
  std::vector<float> gc(mc.param_count()), gg(mg.param_count());
  cpu->to_host(gc.data(), mc.grads(), gc.size());
  gpu->to_host(gg.data(), mg.grads(), gg.size());
  float largest = 0;
  for (float v : gc) largest = std::max(largest, std::fabs(v));
  for (std::size_t i = 0; i < gc.size(); ++i) {
    INFO("gradient " << i);
    REQUIRE(std::fabs(gg[i] - gc[i]) <= 1e-4f * largest);
  }
}

TEST_CASE("GPU: CUDA errors are DeviceErrors with the code, and the device stays usable after one", "[cuda]") {
  if (skip_without_gpu()) return;
  try {
    make_device("cuda", 1, 4096);
    FAIL("no error for GPU 4096");
  } catch (const DeviceError& e) {
    INFO(e.what());
    REQUIRE(e.code() == 101);  // cudaErrorInvalidDevice
    REQUIRE(e.source() == DeviceError::Source::kDevice);
    REQUIRE_FALSE(e.sticky());
    REQUIRE(std::string(e.what()).find("invalid device ordinal") != std::string::npos);
  }
  auto gpu = make_device("cuda", 1);
  try {
    gpu->allocate(std::size_t{1} << 60);
    FAIL("no error for 4 EiB");
  } catch (const DeviceError& e) {
    INFO(e.what());
    REQUIRE(e.code() == 2);  // cudaErrorMemoryAllocation
    REQUIRE_FALSE(e.sticky());
  }
  // The failed call left no error behind for the next kernel launch's check.
  float* p = gpu->allocate(10);
  gpu->fill(p, 1.0f, 10);
  gpu->synchronize();
  gpu->release(p);
}

namespace {

// Four contiguous layers; small buckets, so the gradients travel in several.
std::vector<LayerSpan> test_spans() {
  std::vector<LayerSpan> spans;
  std::size_t offset = 0;
  for (std::size_t count : {std::size_t{300000}, std::size_t{70001}, std::size_t{4096}, std::size_t{17}}) {
    spans.push_back({offset, count});
    offset += count;
  }
  return spans;
}

// One rank's three steps: each layer's gradient is written by a kernel on the compute
// stream just before layer_done (so a missing stream dependency would reduce stale data).
void run_rank(gloo::rendezvous::Store& store, int rank, int world, std::string* failure) try {
  auto gpu = make_device("cuda", 1, rank);
  const auto spans = test_spans();
  const std::size_t total = spans.back().offset + spans.back().count;
  float* grads = gpu->allocate(total);
  auto reducer = make_nccl_reducer(*gpu, store, "cuda-test/g1", rank, world, grads, spans, 64 * 1024,
                                   std::chrono::seconds(60), 2);
  for (int step = 0; step < 3; ++step) {
    reducer->begin_step({static_cast<float>(rank + 1), static_cast<float>(step)});
    for (int l = static_cast<int>(spans.size()) - 1; l >= 0; --l) {
      gpu->fill(grads + spans[l].offset, static_cast<float>((rank + 1) * (l + 1) + step), spans[l].count);
      reducer->layer_done(l);
    }
    const StepComm comm = reducer->finish();
    std::vector<float> host(total);
    gpu->to_host(host.data(), grads, total);
    for (std::size_t l = 0; l < spans.size(); ++l) {
      float want = 0;
      for (int r = 0; r < world; ++r) want += static_cast<float>((r + 1) * static_cast<int>(l + 1) + step);
      for (std::size_t i = spans[l].offset; i < spans[l].offset + spans[l].count; ++i)
        if (host[i] != want) throw std::runtime_error("rank " + std::to_string(rank) + " step " + std::to_string(step) +
                                                      ": gradient " + std::to_string(i) + " is " +
                                                      std::to_string(host[i]) + ", not " + std::to_string(want));
    }
    const float rank_sum = static_cast<float>(world * (world + 1) / 2);
    if (comm.extras != std::vector<float>{rank_sum, static_cast<float>(step * world)})
      throw std::runtime_error("rank " + std::to_string(rank) + ": wrong extras");
    if (comm.comm_total_ms < 0 || comm.exposed_ms < 0) throw std::runtime_error("negative communication time");
  }
  reducer.reset();
  gpu->release(grads);
} catch (const std::exception& e) {
  *failure = e.what();
}

}  // namespace

TEST_CASE("GPU: the NCCL reducer sums buckets and extras across GPUs (one rank per GPU)", "[cuda]") {
  if (skip_without_gpu()) return;
  const int world = std::min(cuda_device_count(), 2);
  if (world < 2) WARN("one GPU: a 1-rank communicator checks the mechanics only");
  gloo::rendezvous::HashStore store;
  std::vector<std::string> failures(static_cast<std::size_t>(world));
  std::vector<std::thread> ranks;
  for (int r = 0; r < world; ++r) ranks.emplace_back(run_rank, std::ref(store), r, world, &failures[r]);
  for (auto& t : ranks) t.join();
  for (const auto& f : failures) REQUIRE(f.empty());
}

TEST_CASE("GPU: a missing NCCL peer is a CollectiveError within the timeout", "[cuda]") {
  if (skip_without_gpu()) return;
  auto gpu = make_device("cuda", 1);
  const auto spans = test_spans();
  float* grads = gpu->allocate(spans.back().offset + spans.back().count);
  gloo::rendezvous::HashStore store;
  const auto start = std::chrono::steady_clock::now();
  // Rank 1 of 2 with no rank 0: no NCCL id ever comes.
  REQUIRE_THROWS_AS(make_nccl_reducer(*gpu, store, "cuda-test/alone", 1, 2, grads, spans, 1 << 20,
                                      std::chrono::milliseconds(1500), 2),
                    CollectiveError);
  // Rank 0 of 2: the id is published, but the communicator never completes.
  REQUIRE_THROWS_AS(make_nccl_reducer(*gpu, store, "cuda-test/alone0", 0, 2, grads, spans, 1 << 20,
                                      std::chrono::milliseconds(1500), 2),
                    CollectiveError);
  REQUIRE(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
  gpu->release(grads);
}

}  // namespace cuda_device_test

// The CPU device: OpenBLAS for the GEMMs and plain loops for everything elementwise.
// Buffers are host memory, so to_host/from_host are copies and synchronize() has nothing
// to wait for. The loops take __restrict pointers so that g++ vectorises them without
// runtime alias checks; none reassociates a floating-point sum, so results do not depend
// on the vector width.
#include "bench/compute/cpu_device.h"

#include "bench/blas/cpu_peak.h"
#include "bench/common/denormals.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>

namespace chaosbench::bench::train {
namespace {

constexpr std::size_t kAlignment = 64;  // a cache line and an AVX-512 vector

class CpuDevice final : public Device {
 public:
  // The constructing thread is the trainer's compute thread: it flushes denormals
  // (bench/common/denormals.h).
  explicit CpuDevice(int threads) : threads_(threads) {
    openblas_set_num_threads(threads);
    flush_denormals();
  }

  std::string describe() const override {
    // openblas_get_config() is e.g. "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY SkylakeX MAX_THREADS=64".
    std::string config = openblas_get_config();
    while (!config.empty() && config.back() == ' ') config.pop_back();
    return "cpu (" + config + ", " + std::to_string(threads_) + (threads_ == 1 ? " thread)" : " threads)");
  }

  // One core's peak from the harness (CHAOSBENCH_CPU_PEAK_GFLOPS, measured once per host),
  // else measured here; times the BLAS threads.
  double peak_tflops() const override {
    if (!core_peak_gflops_) {
      const char* given = std::getenv("CHAOSBENCH_CPU_PEAK_GFLOPS");
      char* end = nullptr;
      const double value = given ? std::strtod(given, &end) : 0.0;
      core_peak_gflops_ = given && end != given && *end == '\0' && value > 0 && std::isfinite(value)
                              ? value
                              : blas::measure_cpu_peak().peak_gflops;
    }
    return *core_peak_gflops_ * threads_ / 1e3;
  }

  float* allocate(std::size_t n) override {
    // aligned_alloc wants a size that is a multiple of the alignment, and never 0.
    const std::size_t bytes = std::max<std::size_t>(kAlignment, (n * sizeof(float) + kAlignment - 1) / kAlignment * kAlignment);
    void* p = std::aligned_alloc(kAlignment, bytes);
    if (p == nullptr) throw std::bad_alloc();
    std::memset(p, 0, bytes);
    return static_cast<float*>(p);
  }
  void release(float* p) override { std::free(p); }
  const float* host_view(const float* dev) const override { return dev; }
  void to_host(float* host, const float* dev, std::size_t n) override { std::memcpy(host, dev, n * sizeof(float)); }
  void from_host(float* dev, const float* host, std::size_t n) override { std::memcpy(dev, host, n * sizeof(float)); }
  void fill(float* dev, float value, std::size_t n) override { std::fill(dev, dev + n, value); }

  void gemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
            int ldb, float beta, float* c, int ldc) override {
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n, k,
                alpha, a, lda, b, ldb, beta, c, ldc);
  }

  void bias_activation(float* y, const float* bias, int rows, int cols, bool relu) override {
    for (int r = 0; r < rows; ++r) {
      float* __restrict row = y + static_cast<std::size_t>(r) * cols;
      const float* __restrict b = bias;
      if (relu) {
        for (int c = 0; c < cols; ++c) row[c] = std::max(row[c] + b[c], 0.0f);
      } else {
        for (int c = 0; c < cols; ++c) row[c] += b[c];
      }
    }
  }

  void relu_backward(float* dy, const float* y, std::size_t n) override {
    float* __restrict d = dy;
    const float* __restrict out = y;
    for (std::size_t i = 0; i < n; ++i) d[i] = out[i] > 0.0f ? d[i] : 0.0f;
  }

  void column_sums(const float* dy, int rows, int cols, float* out) override {
    float* __restrict sums = out;
    std::fill(sums, sums + cols, 0.0f);
    for (int r = 0; r < rows; ++r) {
      const float* __restrict row = dy + static_cast<std::size_t>(r) * cols;
      for (int c = 0; c < cols; ++c) sums[c] += row[c];
    }
  }

  double squared_error(const float* pred, const float* target, std::size_t n, float scale, float* grad) override {
    // No __restrict: grad may be pred itself (an in-place gradient). The sum is serial and
    // in double: n is one batch's outputs, and the loss is logged.
    double sum = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      const float diff = pred[i] - target[i];
      grad[i] = scale * 2.0f * diff;
      sum += static_cast<double>(diff) * diff;
    }
    return sum;
  }

  void sgd_momentum(float* p, const float* grad, float* m, std::size_t n, float lr, float momentum,
                    float weight_decay, float grad_scale) override {
    float* __restrict param = p;
    const float* __restrict g = grad;
    float* __restrict mom = m;
    for (std::size_t i = 0; i < n; ++i) {
      const float step = g[i] * grad_scale + weight_decay * param[i];
      mom[i] = momentum * mom[i] + step;
      param[i] -= lr * mom[i];
    }
  }

  void adamw(float* p, const float* grad, float* m, float* v, std::size_t n, float lr, float beta1, float beta2,
             float eps, float weight_decay, std::int64_t step, float grad_scale) override {
    if (step < 1) throw std::invalid_argument("adamw: step must be >= 1");
    // The bias corrections once per call, in double: beta2^t is 1 - 1e-3 t for small t, and
    // float would lose most of its digits in 1 - beta2^t.
    const double t = static_cast<double>(step);
    const float correction1 = static_cast<float>(1.0 - std::pow(static_cast<double>(beta1), t));
    const float sqrt_correction2 = static_cast<float>(std::sqrt(1.0 - std::pow(static_cast<double>(beta2), t)));
    const float decay = 1.0f - lr * weight_decay;
    float* __restrict param = p;
    const float* __restrict g = grad;
    float* __restrict avg = m;
    float* __restrict avg_sq = v;
    for (std::size_t i = 0; i < n; ++i) {
      const float gi = g[i] * grad_scale;
      avg[i] = beta1 * avg[i] + (1.0f - beta1) * gi;
      avg_sq[i] = beta2 * avg_sq[i] + (1.0f - beta2) * gi * gi;
      // sqrt(v / c2) = sqrt(v) / sqrt(c2): one square root per element, as PyTorch does.
      const float denom = std::sqrt(avg_sq[i]) / sqrt_correction2 + eps;
      param[i] = param[i] * decay - lr * (avg[i] / correction1) / denom;
    }
  }

  void synchronize() override {}

 private:
  int threads_;
  mutable std::optional<double> core_peak_gflops_;
};

}  // namespace

std::unique_ptr<Device> make_cpu_device(int threads) {
  if (threads < 1) throw std::invalid_argument("make_cpu_device: threads must be >= 1");
  return std::make_unique<CpuDevice>(threads);
}

}  // namespace chaosbench::bench::train

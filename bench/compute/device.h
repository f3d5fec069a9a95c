// The device layer of the trainer: every numeric operation the model and the optimizers
// perform, on buffers the device owns. The CPU device (cpu_device.h) runs them with
// OpenBLAS and plain loops; a CUDA device (cuBLAS) implements the same interface, so the
// trainer, the model and the optimizers never change for a GPU, and GPU fault hooks go
// here. Buffers are plain float pointers the device allocated; on a GPU they are device
// addresses, which is why host code never dereferences them directly but copies through
// to_host/from_host.
// Threads: one device is used by one thread at a time (the trainer's compute thread);
// the communication thread only reads gradient buffers after the device synchronised.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace chaosbench::bench::train {

class Device {
 public:
  virtual ~Device() = default;
  // "cpu (OpenBLAS 0.3.21, 1 thread)" for logs and results.
  virtual std::string describe() const = 0;

  // The hardware's fp32 peak for what this device computes with, in TFLOP/s (the
  // denominator of train/mfu_hw): on the CPU its BLAS threads x one core's lanes x 2 x FMA
  // units x clock (bench/blas/cpu_peak.h); on a GPU its SMs x fp32 lanes per SM x 2 x
  // clock. 0 when unknown. May measure on its first call (about 0.1 s on the CPU).
  virtual double peak_tflops() const { return 0; }

  // Zero-filled buffer of n floats, owned by the device until release().
  virtual float* allocate(std::size_t n) = 0;
  virtual void release(float* p) = 0;
  virtual void to_host(float* host, const float* dev, std::size_t n) = 0;
  virtual void from_host(float* dev, const float* host, std::size_t n) = 0;
  virtual void fill(float* dev, float value, std::size_t n) = 0;

  // Row-major C[m x n] = alpha * op(A)[m x k] * op(B)[k x n] + beta * C, as cblas_sgemm
  // with CblasRowMajor; lda/ldb/ldc are row strides of the stored matrices.
  virtual void gemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda,
                    const float* b, int ldb, float beta, float* c, int ldc) = 0;
  // y[r][c] += bias[c] for a rows x cols matrix, then y = max(y, 0) when relu.
  virtual void bias_activation(float* y, const float* bias, int rows, int cols, bool relu) = 0;
  // dy[i] = 0 where y[i] <= 0 (the ReLU's gradient, y being the ReLU's output).
  virtual void relu_backward(float* dy, const float* y, std::size_t n) = 0;
  // out[c] = sum over rows of dy[r][c] (the bias gradient); overwrites out.
  virtual void column_sums(const float* dy, int rows, int cols, float* out) = 0;
  // Squared error: returns sum over i of (pred[i] - target[i])^2 and writes
  // grad[i] = scale * 2 * (pred[i] - target[i]).
  virtual double squared_error(const float* pred, const float* target, std::size_t n, float scale, float* grad) = 0;

  // Optimizer updates over n elements, in place. grad_scale multiplies every gradient
  // first (1 / global batch when gradients are summed over samples).
  // SGD with momentum (PyTorch's form): g = grad*scale + wd*p; m = momentum*m + g; p -= lr*m.
  virtual void sgd_momentum(float* p, const float* grad, float* m, std::size_t n, float lr, float momentum,
                            float weight_decay, float grad_scale) = 0;
  // AdamW (Loshchilov & Hutter; PyTorch's AdamW): p -= lr*wd*p; m = b1*m + (1-b1)g;
  // v = b2*v + (1-b2)g^2; p -= lr * (m/(1-b1^t)) / (sqrt(v/(1-b2^t)) + eps), t = step (>= 1).
  virtual void adamw(float* p, const float* grad, float* m, float* v, std::size_t n, float lr, float beta1,
                     float beta2, float eps, float weight_decay, std::int64_t step, float grad_scale) = 0;

  // Blocks until every operation issued so far is complete (a no-op on the CPU).
  virtual void synchronize() = 0;

  // The step's activation memory, requested at the start of every step as a caching
  // allocator does (which is where a GPU's out-of-memory surfaces in training). The
  // model's buffers are already allocated, so the devices here have nothing to do.
  virtual void reserve_workspace(std::size_t /*floats*/) {}

  // `dev` itself when the device's buffers are host memory (the CPU device), else
  // nullptr: then host code copies through to_host.
  virtual const float* host_view(const float* /*dev*/) const { return nullptr; }
};

}  // namespace chaosbench::bench::train

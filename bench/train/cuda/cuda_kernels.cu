// The CUDA device's element-wise kernels and their launchers (cuda_kernels.h). Each
// kernel is the CPU device's loop body (cpu_device.cc) over a grid-stride loop, with the
// same expression in the same order: built with --fmad=false, IEEE division and square
// root and no flush-to-zero, every element gets the CPU's bits. The only reduction that
// reassociates is the squared error's double sum, in a fixed order (so deterministic run
// to run), which differs from the CPU's serial sum by double rounding only.
#include "bench/train/cuda/cuda_kernels.h"

#include <algorithm>

namespace chaosbench::bench::train::cuda {
namespace {

constexpr int kThreads = 256;
constexpr std::size_t kMaxBlocks = 65535;

unsigned blocks_for(std::size_t n) {
  return static_cast<unsigned>(std::min<std::size_t>((n + kThreads - 1) / kThreads, kMaxBlocks));
}

__device__ std::size_t first_index() { return static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ std::size_t grid_stride() { return static_cast<std::size_t>(gridDim.x) * blockDim.x; }

__global__ void fill_kernel(float* p, float value, std::size_t n) {
  for (std::size_t i = first_index(); i < n; i += grid_stride()) p[i] = value;
}

__global__ void bias_activation_kernel(float* y, const float* __restrict__ bias, std::size_t n, int cols, bool relu) {
  for (std::size_t i = first_index(); i < n; i += grid_stride()) {
    const float v = y[i] + bias[i % static_cast<std::size_t>(cols)];
    // std::max(v, 0.0f) is (v < 0.0f) ? 0.0f : v, which keeps a NaN and a -0.0 as they are.
    y[i] = relu && v < 0.0f ? 0.0f : v;
  }
}

__global__ void relu_backward_kernel(float* __restrict__ dy, const float* __restrict__ y, std::size_t n) {
  for (std::size_t i = first_index(); i < n; i += grid_stride()) dy[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

__global__ void column_sums_kernel(const float* __restrict__ dy, int rows, int cols, float* __restrict__ out) {
  const std::size_t c = first_index();
  if (c >= static_cast<std::size_t>(cols)) return;
  float sum = 0.0f;
  for (int r = 0; r < rows; ++r) sum += dy[static_cast<std::size_t>(r) * static_cast<std::size_t>(cols) + c];
  out[c] = sum;
}

// Sums kThreads doubles in shared memory by a fixed halving tree; thread 0 gets the total.
__device__ double block_sum(double value) {
  __shared__ double partial[kThreads];
  partial[threadIdx.x] = value;
  __syncthreads();
  for (unsigned half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  return partial[0];
}

// No __restrict__: grad may be pred itself; each element is read before it is written.
__global__ void squared_error_kernel(const float* pred, const float* target, std::size_t n, float scale, float* grad,
                                     double* partials) {
  double sum = 0.0;
  for (std::size_t i = first_index(); i < n; i += grid_stride()) {
    const float diff = pred[i] - target[i];
    grad[i] = scale * 2.0f * diff;
    sum += static_cast<double>(diff) * diff;
  }
  const double total = block_sum(sum);
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

__global__ void sum_partials_kernel(const double* partials, unsigned count, double* result) {
  double sum = 0.0;
  for (unsigned i = threadIdx.x; i < count; i += blockDim.x) sum += partials[i];
  const double total = block_sum(sum);
  if (threadIdx.x == 0) *result = total;
}

__global__ void sgd_momentum_kernel(float* __restrict__ p, const float* __restrict__ grad, float* __restrict__ m,
                                    std::size_t n, float lr, float momentum, float weight_decay, float grad_scale) {
  for (std::size_t i = first_index(); i < n; i += grid_stride()) {
    const float step = grad[i] * grad_scale + weight_decay * p[i];
    m[i] = momentum * m[i] + step;
    p[i] -= lr * m[i];
  }
}

__global__ void adamw_kernel(float* __restrict__ p, const float* __restrict__ grad, float* __restrict__ m,
                             float* __restrict__ v, std::size_t n, float lr, float beta1, float beta2, float eps,
                             float correction1, float sqrt_correction2, float decay, float grad_scale) {
  for (std::size_t i = first_index(); i < n; i += grid_stride()) {
    const float gi = grad[i] * grad_scale;
    m[i] = beta1 * m[i] + (1.0f - beta1) * gi;
    v[i] = beta2 * v[i] + (1.0f - beta2) * gi * gi;
    const float denom = sqrtf(v[i]) / sqrt_correction2 + eps;
    p[i] = p[i] * decay - lr * (m[i] / correction1) / denom;
  }
}

}  // namespace

cudaError_t launch_fill(cudaStream_t stream, float* p, float value, std::size_t n) {
  if (n == 0) return cudaSuccess;
  fill_kernel<<<blocks_for(n), kThreads, 0, stream>>>(p, value, n);
  return cudaGetLastError();
}

cudaError_t launch_bias_activation(cudaStream_t stream, float* y, const float* bias, int rows, int cols, bool relu) {
  if (rows <= 0 || cols <= 0) return cudaSuccess;
  const std::size_t n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
  bias_activation_kernel<<<blocks_for(n), kThreads, 0, stream>>>(y, bias, n, cols, relu);
  return cudaGetLastError();
}

cudaError_t launch_relu_backward(cudaStream_t stream, float* dy, const float* y, std::size_t n) {
  if (n == 0) return cudaSuccess;
  relu_backward_kernel<<<blocks_for(n), kThreads, 0, stream>>>(dy, y, n);
  return cudaGetLastError();
}

cudaError_t launch_column_sums(cudaStream_t stream, const float* dy, int rows, int cols, float* out) {
  if (cols <= 0) return cudaSuccess;
  // rows == 0 still runs: every sum is then 0, as on the CPU.
  column_sums_kernel<<<blocks_for(static_cast<std::size_t>(cols)), kThreads, 0, stream>>>(dy, std::max(rows, 0), cols,
                                                                                          out);
  return cudaGetLastError();
}

cudaError_t launch_squared_error(cudaStream_t stream, const float* pred, const float* target, std::size_t n,
                                 float scale, float* grad, double* partials, double* result) {
  if (n == 0) return cudaMemsetAsync(result, 0, sizeof(double), stream);
  const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>(blocks_for(n), kSquaredErrorBlocks));
  squared_error_kernel<<<blocks, kThreads, 0, stream>>>(pred, target, n, scale, grad, partials);
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  sum_partials_kernel<<<1, kThreads, 0, stream>>>(partials, blocks, result);
  return cudaGetLastError();
}

cudaError_t launch_sgd_momentum(cudaStream_t stream, float* p, const float* grad, float* m, std::size_t n, float lr,
                                float momentum, float weight_decay, float grad_scale) {
  if (n == 0) return cudaSuccess;
  sgd_momentum_kernel<<<blocks_for(n), kThreads, 0, stream>>>(p, grad, m, n, lr, momentum, weight_decay, grad_scale);
  return cudaGetLastError();
}

cudaError_t launch_adamw(cudaStream_t stream, float* p, const float* grad, float* m, float* v, std::size_t n, float lr,
                         float beta1, float beta2, float eps, float correction1, float sqrt_correction2, float decay,
                         float grad_scale) {
  if (n == 0) return cudaSuccess;
  adamw_kernel<<<blocks_for(n), kThreads, 0, stream>>>(p, grad, m, v, n, lr, beta1, beta2, eps, correction1,
                                                       sqrt_correction2, decay, grad_scale);
  return cudaGetLastError();
}

}  // namespace chaosbench::bench::train::cuda

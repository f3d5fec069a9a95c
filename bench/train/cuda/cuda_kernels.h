// Internal to bench/train/cuda/: host-side launchers of the CUDA device's element-wise
// kernels (cuda_kernels.cu). Each enqueues on `stream` and returns the launch's status
// (cudaGetLastError), so the caller turns it into a DeviceError; a launch over zero
// elements enqueues nothing. Semantics are exactly those of cpu_device.cc, bit for bit:
// the .cu is compiled with --fmad=false (like -ffp-contract=off on the CPU side) and with
// IEEE division and square root, and no kernel reassociates a float sum.
// Threads: as for the stream itself (one thread at a time).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace chaosbench::bench::train::cuda {

cudaError_t launch_fill(cudaStream_t stream, float* p, float value, std::size_t n);
cudaError_t launch_bias_activation(cudaStream_t stream, float* y, const float* bias, int rows, int cols, bool relu);
cudaError_t launch_relu_backward(cudaStream_t stream, float* dy, const float* y, std::size_t n);
// One thread per column summing its rows in order, as the CPU loop does.
cudaError_t launch_column_sums(cudaStream_t stream, const float* dy, int rows, int cols, float* out);

// The squared error in two deterministic passes: per-block partial sums in double (a
// fixed grid-stride order and a fixed tree), then one block sums the partials into
// *result (device memory). `partials` holds at least kSquaredErrorBlocks doubles.
constexpr int kSquaredErrorBlocks = 256;
cudaError_t launch_squared_error(cudaStream_t stream, const float* pred, const float* target, std::size_t n,
                                 float scale, float* grad, double* partials, double* result);

cudaError_t launch_sgd_momentum(cudaStream_t stream, float* p, const float* grad, float* m, std::size_t n, float lr,
                                float momentum, float weight_decay, float grad_scale);
// correction1 = 1 - beta1^t, sqrt_correction2 = sqrt(1 - beta2^t) and decay = 1 - lr*wd,
// computed on the host exactly as the CPU device computes them.
cudaError_t launch_adamw(cudaStream_t stream, float* p, const float* grad, float* m, float* v, std::size_t n, float lr,
                         float beta1, float beta2, float eps, float correction1, float sqrt_correction2, float decay,
                         float grad_scale);

}  // namespace chaosbench::bench::train::cuda

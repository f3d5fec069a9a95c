// The CUDA device (cuda_device.h). Row-major GEMMs go to column-major cuBLAS by the
// transpose identity: a row-major [r x c] matrix with row stride ld is, read column-major,
// its transpose with leading dimension ld; so row-major C = op(A) op(B) is column-major
// C^T = op(B)^T op(A)^T, which is cublasSgemm with the operands swapped (B first), the
// same transpose flags, and m and n swapped. Copies to and from the host are issued on
// the device's stream and waited for, so they are ordered after earlier work (the legacy
// default stream, which cudaMemcpy uses, does not wait for a non-blocking stream) and
// the host buffer is free again when they return.
#include "bench/train/cuda/cuda_device.h"

#include <cmath>
#include <stdexcept>

#include "bench/train/cuda/cuda_check.h"
#include "bench/train/cuda/cuda_kernels.h"
#include "bench/train/cuda/cuda_train.h"

namespace chaosbench::bench::train::cuda {
namespace {

std::string cublas_version(const CublasLibrary& blas, cublasHandle_t handle) {
  int v = 0;
  check_cublas(blas.get_version(handle, &v), "cublasGetVersion");
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

// FP32 lanes (results of a multiply-add per clock) per multiprocessor, by compute
// capability: the CUDA C++ Programming Guide's arithmetic-instruction throughput table.
int fp32_lanes_per_sm(int major, int minor) {
  if (major == 6) return minor == 0 ? 64 : 128;
  if (major == 7 || (major == 8 && minor == 0)) return 64;
  return 128;  // 8.6, 8.7, 8.9, 9.0, 10.x, 12.x
}

// SMs x lanes x 2 (an FMA is two FLOPs) x the peak clock: the published fp32 figure
// (H100 SXM and H200: 132 x 128 x 2 x 1.98 GHz = 66.9 TFLOP/s). 0 when an attribute is missing.
double fp32_peak_tflops(int device) {
  int sms = 0, khz = 0, major = 0, minor = 0;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess)
    return 0;
  return static_cast<double>(sms) * fp32_lanes_per_sm(major, minor) * 2.0 * khz * 1e3 / 1e12;
}

}  // namespace

CudaDevice::CudaDevice(int device_index) : index_(device_index) {
  try {
    blas_ = &cublas_library();
    bind();
    cudaDeviceProp prop{};
    check_cuda(cudaGetDeviceProperties(&prop, index_), "cudaGetDeviceProperties");
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    check_cublas(blas_->create(&cublas_), "cublasCreate");
    check_cublas(blas_->set_stream(cublas_, stream_), "cublasSetStream");
    // Plain FP32: no TF32 tensor cores, which would round the inputs to 10-bit mantissas.
    check_cublas(blas_->set_math_mode(cublas_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
    check_cuda(cudaMalloc(reinterpret_cast<void**>(&partials_), (kSquaredErrorBlocks + 1) * sizeof(double)),
               "cudaMalloc (squared error partials)");
    check_cuda(cudaMallocHost(reinterpret_cast<void**>(&loss_host_), sizeof(double)), "cudaMallocHost");
    description_ = "cuda (" + std::string(prop.name) + ", cuBLAS " + cublas_version(*blas_, cublas_) + ")";
    peak_tflops_ = fp32_peak_tflops(index_);
  } catch (...) {
    destroy();
    throw;
  }
}

CudaDevice::~CudaDevice() { destroy(); }

void CudaDevice::destroy() noexcept {
  // Best effort: after a sticky error every call fails, and the context takes it all.
  cudaSetDevice(index_);
  if (stream_ != nullptr) cudaStreamSynchronize(stream_);
  if (loss_host_ != nullptr) cudaFreeHost(loss_host_);
  if (partials_ != nullptr) cudaFree(partials_);
  if (cublas_ != nullptr) blas_->destroy(cublas_);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
  loss_host_ = nullptr;
  partials_ = nullptr;
  cublas_ = nullptr;
  stream_ = nullptr;
  (void)cudaGetLastError();  // leaves no stale error behind for this thread's next check
}

void CudaDevice::bind() const { check_cuda(cudaSetDevice(index_), "cudaSetDevice"); }

float* CudaDevice::allocate(std::size_t n) {
  bind();
  const std::size_t bytes = std::max<std::size_t>(n, 1) * sizeof(float);
  void* p = nullptr;
  check_cuda(cudaMalloc(&p, bytes), "cudaMalloc");
  if (const cudaError_t e = cudaMemsetAsync(p, 0, bytes, stream_); e != cudaSuccess) {
    cudaFree(p);
    throw_cuda(e, "cudaMemsetAsync");
  }
  return static_cast<float*>(p);
}

void CudaDevice::release(float* p) {
  if (p == nullptr) return;
  cudaSetDevice(index_);
  cudaStreamSynchronize(stream_);  // no kernel of ours still uses it
  cudaFree(p);
  (void)cudaGetLastError();
}

void CudaDevice::to_host(float* host, const float* dev, std::size_t n) {
  if (n == 0) return;
  bind();
  check_cuda(cudaMemcpyAsync(host, dev, n * sizeof(float), cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync (to host)");
  check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (to host)");
}

void CudaDevice::from_host(float* dev, const float* host, std::size_t n) {
  if (n == 0) return;
  bind();
  check_cuda(cudaMemcpyAsync(dev, host, n * sizeof(float), cudaMemcpyHostToDevice, stream_),
             "cudaMemcpyAsync (from host)");
  check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (from host)");
}

void CudaDevice::fill(float* dev, float value, std::size_t n) {
  bind();
  check_cuda(launch_fill(stream_, dev, value, n), "fill kernel");
}

void CudaDevice::gemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda,
                      const float* b, int ldb, float beta, float* c, int ldc) {
  bind();
  check_cublas(blas_->sgemm(cublas_, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k,
                           &alpha, b, ldb, a, lda, &beta, c, ldc),
               "cublasSgemm");
}

void CudaDevice::bias_activation(float* y, const float* bias, int rows, int cols, bool relu) {
  bind();
  check_cuda(launch_bias_activation(stream_, y, bias, rows, cols, relu), "bias_activation kernel");
}

void CudaDevice::relu_backward(float* dy, const float* y, std::size_t n) {
  bind();
  check_cuda(launch_relu_backward(stream_, dy, y, n), "relu_backward kernel");
}

void CudaDevice::column_sums(const float* dy, int rows, int cols, float* out) {
  bind();
  check_cuda(launch_column_sums(stream_, dy, rows, cols, out), "column_sums kernel");
}

double CudaDevice::squared_error(const float* pred, const float* target, std::size_t n, float scale, float* grad) {
  bind();
  double* total = partials_ + kSquaredErrorBlocks;
  check_cuda(launch_squared_error(stream_, pred, target, n, scale, grad, partials_, total), "squared_error kernel");
  check_cuda(cudaMemcpyAsync(loss_host_, total, sizeof(double), cudaMemcpyDeviceToHost, stream_),
             "cudaMemcpyAsync (squared error)");
  check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (squared error)");
  return *loss_host_;
}

void CudaDevice::sgd_momentum(float* p, const float* grad, float* m, std::size_t n, float lr, float momentum,
                              float weight_decay, float grad_scale) {
  bind();
  check_cuda(launch_sgd_momentum(stream_, p, grad, m, n, lr, momentum, weight_decay, grad_scale),
             "sgd_momentum kernel");
}

void CudaDevice::adamw(float* p, const float* grad, float* m, float* v, std::size_t n, float lr, float beta1,
                       float beta2, float eps, float weight_decay, std::int64_t step, float grad_scale) {
  if (step < 1) throw std::invalid_argument("adamw: step must be >= 1");
  // The same host arithmetic as the CPU device (cpu_device.cc), so the kernel sees the
  // same bias corrections to the bit.
  const double t = static_cast<double>(step);
  const float correction1 = static_cast<float>(1.0 - std::pow(static_cast<double>(beta1), t));
  const float sqrt_correction2 = static_cast<float>(std::sqrt(1.0 - std::pow(static_cast<double>(beta2), t)));
  const float decay = 1.0f - lr * weight_decay;
  bind();
  check_cuda(launch_adamw(stream_, p, grad, m, v, n, lr, beta1, beta2, eps, correction1, sqrt_correction2, decay,
                          grad_scale),
             "adamw kernel");
}

void CudaDevice::synchronize() {
  bind();
  check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
}

std::unique_ptr<Device> make_cuda_device(int device_index) { return std::make_unique<CudaDevice>(device_index); }

int cuda_device_count(std::string* why) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  (void)cudaGetLastError();
  if (e != cudaSuccess) count = 0;
  if (count == 0 && why != nullptr)
    *why = e != cudaSuccess ? "cudaGetDeviceCount returned " + std::to_string(static_cast<int>(e)) + " (" +
                                  cudaGetErrorName(e) + ": " + cudaGetErrorString(e) + ")"
                            : "cudaGetDeviceCount found 0 devices";
  return count;
}

}  // namespace chaosbench::bench::train::cuda

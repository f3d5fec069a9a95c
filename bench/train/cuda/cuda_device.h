// The CUDA device: the trainer's Device (bench/compute/device.h) on one GPU. GEMMs run in
// cuBLAS (FP32, no TF32), everything else in the kernels of cuda_kernels.cu, all on one
// non-blocking stream that this object owns, so the work of one device is ordered and
// never waits on other streams. Results match the CPU device bit for bit except the
// GEMMs (cuBLAS's own summation order) and the squared error's double sum (a fixed,
// deterministic tree instead of a serial loop).
// cuBLAS is opened on the first construction (cublas_library.h); std::runtime_error when
// it cannot be. Errors: every failing CUDA or cuBLAS call throws bench::DeviceError (Source::kDevice,
// the cudaError_t — or the cublasStatus_t when no CUDA error is pending — and sticky for
// errors that lose the context). Kernel faults are asynchronous: they surface at the next
// call that waits (to_host, squared_error, synchronize), as on any CUDA program.
// release() and the destructor never throw: after a sticky error the memory goes with
// the context anyway.
// Threads: one thread at a time, like every Device; each call first makes this device
// current on the calling thread, so that thread may differ from call to call.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <memory>
#include <string>

#include "bench/train/cuda/cublas_library.h"
#include "bench/compute/device.h"

namespace chaosbench::bench::train::cuda {

class CudaDevice final : public Device {
 public:
  // Throws DeviceError when the GPU cannot be used (no driver: 35, no device: 100, ...).
  explicit CudaDevice(int device_index);
  ~CudaDevice() override;
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  // The GPU's ordinal and the stream every operation is issued on: a gradient reducer
  // orders its collectives after the compute work through an event on this stream.
  int index() const { return index_; }
  cudaStream_t stream() const { return stream_; }
  // Makes this device current on the calling thread.
  void bind() const;

  std::string describe() const override { return description_; }
  double peak_tflops() const override { return peak_tflops_; }
  float* allocate(std::size_t n) override;
  void release(float* p) override;
  void to_host(float* host, const float* dev, std::size_t n) override;
  void from_host(float* dev, const float* host, std::size_t n) override;
  void fill(float* dev, float value, std::size_t n) override;
  void gemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
            int ldb, float beta, float* c, int ldc) override;
  void bias_activation(float* y, const float* bias, int rows, int cols, bool relu) override;
  void relu_backward(float* dy, const float* y, std::size_t n) override;
  void column_sums(const float* dy, int rows, int cols, float* out) override;
  double squared_error(const float* pred, const float* target, std::size_t n, float scale, float* grad) override;
  void sgd_momentum(float* p, const float* grad, float* m, std::size_t n, float lr, float momentum,
                    float weight_decay, float grad_scale) override;
  void adamw(float* p, const float* grad, float* m, float* v, std::size_t n, float lr, float beta1, float beta2,
             float eps, float weight_decay, std::int64_t step, float grad_scale) override;
  void synchronize() override;

 private:
  void destroy() noexcept;  // releases whatever was made, ignoring errors

  int index_;
  std::string description_;
  double peak_tflops_ = 0;
  const CublasLibrary* blas_ = nullptr;  // cuBLAS's entry points (dlopen'ed)
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  double* partials_ = nullptr;      // device: the squared error's per-block sums, then its total
  double* loss_host_ = nullptr;     // pinned: the total, copied back
};

}  // namespace chaosbench::bench::train::cuda

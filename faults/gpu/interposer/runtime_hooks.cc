// The CUDA runtime API hooks: cudaMalloc, cudaDeviceSynchronize, cudaLaunchKernel, ... are
// defined here with the runtime's exact prototypes (cuda_runtime_api.h), so a program
// linked against the shared libcudart calls these first; each applies its family's faults
// (interposer.h, cuda_call) and calls the real function. The _ptsz/_ptds variants are what
// code compiled with --default-stream per-thread calls.
//
// An injected runtime error is also what the thread's next cudaGetLastError returns (and
// cudaPeekAtLastError until then), as the real runtime records a failed call's error.
#include <utility>

#include <cuda_runtime_api.h>

#include "faults/gpu/interposer/interposer.h"

namespace chaosbench::faults::gpu::interposer {
namespace {

// Calls hook `self`'s real function (same prototype) under `family`'s faults.
template <class... P, class... A>
cudaError_t runtime_call(Family family, RealSymbol& real, cudaError_t (*self)(P...), HostBuffer copied, A... args) {
  (void)self;
  const cudaError_t result = cuda_call<cudaError_t>(
      Layer::kRuntime, family,
      [&] {
        auto* fn = reinterpret_cast<cudaError_t (*)(P...)>(resolve(real));
        return fn != nullptr ? fn(args...) : cudaErrorSharedObjectSymbolNotFound;
      },
      copied);
  return result;
}

template <class... P, class... A>
cudaError_t runtime_call(Family family, RealSymbol& real, cudaError_t (*self)(P...), A... args) {
  return runtime_call(family, real, self, HostBuffer{}, args...);
}

cudaError_t copy(RealSymbol& real, cudaError_t (*self)(void*, const void*, size_t, cudaMemcpyKind), void* dst,
                 const void* src, size_t count, cudaMemcpyKind kind) {
  // Only an explicit DeviceToHost copy is known to land in host memory without asking the
  // driver about the pointers; cudaMemcpyDefault copies are not corrupted.
  const HostBuffer host = kind == cudaMemcpyDeviceToHost ? HostBuffer{dst, count} : HostBuffer{};
  return runtime_call(Family::kSync, real, self, host, dst, src, count, kind);
}

#define CB_REAL(name) RealSymbol r_##name{#name, Library::kCudaRuntime}
CB_REAL(cudaMalloc);
CB_REAL(cudaMallocManaged);
CB_REAL(cudaMallocHost);
CB_REAL(cudaHostAlloc);
CB_REAL(cudaMallocPitch);
CB_REAL(cudaMalloc3D);
CB_REAL(cudaMallocArray);
CB_REAL(cudaMalloc3DArray);
CB_REAL(cudaMallocAsync);
CB_REAL(cudaMallocAsync_ptsz);
CB_REAL(cudaMallocFromPoolAsync);
CB_REAL(cudaMallocFromPoolAsync_ptsz);
CB_REAL(cudaDeviceSynchronize);
CB_REAL(cudaStreamSynchronize);
CB_REAL(cudaStreamSynchronize_ptsz);
CB_REAL(cudaEventSynchronize);
CB_REAL(cudaMemcpy);
CB_REAL(cudaMemcpy_ptds);
CB_REAL(cudaLaunchKernel);
CB_REAL(cudaLaunchKernel_ptsz);
CB_REAL(cudaLaunchKernelExC);
CB_REAL(cudaLaunchKernelExC_ptsz);
CB_REAL(cudaLaunchCooperativeKernel);
CB_REAL(cudaLaunchCooperativeKernel_ptsz);
CB_REAL(cudaGraphLaunch);
CB_REAL(cudaGraphLaunch_ptsz);
CB_REAL(cudaStreamQuery);
CB_REAL(cudaStreamQuery_ptsz);
CB_REAL(cudaEventQuery);
CB_REAL(cudaEventRecord);
CB_REAL(cudaEventRecord_ptsz);
CB_REAL(cudaMemcpyAsync);
CB_REAL(cudaMemcpyAsync_ptsz);
CB_REAL(cudaMemset);
CB_REAL(cudaMemsetAsync);
CB_REAL(cudaFree);
CB_REAL(cudaFreeHost);
CB_REAL(cudaFreeAsync);
CB_REAL(cudaGetDeviceCount);
CB_REAL(cudaSetDevice);
CB_REAL(cudaGetLastError);
CB_REAL(cudaPeekAtLastError);
#undef CB_REAL

}  // namespace
}  // namespace chaosbench::faults::gpu::interposer

using namespace chaosbench::faults::gpu::interposer;  // NOLINT: the hooks must be global

// Allocations: CB_OOM.
CHAOSBENCH_HOOK cudaError_t cudaMalloc(void** p, size_t size) { return runtime_call(Family::kAlloc, r_cudaMalloc, &cudaMalloc, p, size); }
CHAOSBENCH_HOOK cudaError_t cudaMallocManaged(void** p, size_t size, unsigned int flags) {
  return runtime_call(Family::kAlloc, r_cudaMallocManaged, &cudaMallocManaged, p, size, flags);
}
CHAOSBENCH_HOOK cudaError_t cudaMallocHost(void** p, size_t size) {
  return runtime_call(Family::kAlloc, r_cudaMallocHost, &cudaMallocHost, p, size);
}
CHAOSBENCH_HOOK cudaError_t cudaHostAlloc(void** p, size_t size, unsigned int flags) {
  return runtime_call(Family::kAlloc, r_cudaHostAlloc, &cudaHostAlloc, p, size, flags);
}
CHAOSBENCH_HOOK cudaError_t cudaMallocPitch(void** p, size_t* pitch, size_t width, size_t height) {
  return runtime_call(Family::kAlloc, r_cudaMallocPitch, &cudaMallocPitch, p, pitch, width, height);
}
CHAOSBENCH_HOOK cudaError_t cudaMalloc3D(cudaPitchedPtr* p, cudaExtent extent) {
  return runtime_call(Family::kAlloc, r_cudaMalloc3D, &cudaMalloc3D, p, extent);
}
CHAOSBENCH_HOOK cudaError_t cudaMallocArray(cudaArray_t* array, const cudaChannelFormatDesc* desc, size_t width,
                                            size_t height, unsigned int flags) {
  return runtime_call(Family::kAlloc, r_cudaMallocArray, &cudaMallocArray, array, desc, width, height, flags);
}
CHAOSBENCH_HOOK cudaError_t cudaMalloc3DArray(cudaArray_t* array, const cudaChannelFormatDesc* desc, cudaExtent extent,
                                              unsigned int flags) {
  return runtime_call(Family::kAlloc, r_cudaMalloc3DArray, &cudaMalloc3DArray, array, desc, extent, flags);
}
CHAOSBENCH_HOOK cudaError_t cudaMallocAsync(void** p, size_t size, cudaStream_t stream) {
  return runtime_call(Family::kAlloc, r_cudaMallocAsync, &cudaMallocAsync, p, size, stream);
}
CHAOSBENCH_HOOK cudaError_t cudaMallocAsync_ptsz(void** p, size_t size, cudaStream_t stream) {
  return runtime_call(Family::kAlloc, r_cudaMallocAsync_ptsz, &cudaMallocAsync_ptsz, p, size, stream);
}
CHAOSBENCH_HOOK cudaError_t cudaMallocFromPoolAsync(void** p, size_t size, cudaMemPool_t pool, cudaStream_t stream) {
  return runtime_call(Family::kAlloc, r_cudaMallocFromPoolAsync, &cudaMallocFromPoolAsync, p, size, pool, stream);
}
CHAOSBENCH_HOOK cudaError_t cudaMallocFromPoolAsync_ptsz(void** p, size_t size, cudaMemPool_t pool, cudaStream_t stream) {
  return runtime_call(Family::kAlloc, r_cudaMallocFromPoolAsync_ptsz, &cudaMallocFromPoolAsync_ptsz, p, size, pool, stream);
}

// Synchronisations: CB_HANG blocks them, CB_SLOWDOWN stretches them.
CHAOSBENCH_HOOK cudaError_t cudaDeviceSynchronize() {
  return runtime_call(Family::kSync, r_cudaDeviceSynchronize, &cudaDeviceSynchronize);
}
CHAOSBENCH_HOOK cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  return runtime_call(Family::kSync, r_cudaStreamSynchronize, &cudaStreamSynchronize, stream);
}
CHAOSBENCH_HOOK cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream) {
  return runtime_call(Family::kSync, r_cudaStreamSynchronize_ptsz, &cudaStreamSynchronize_ptsz, stream);
}
CHAOSBENCH_HOOK cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  return runtime_call(Family::kSync, r_cudaEventSynchronize, &cudaEventSynchronize, event);
}
// A blocking copy waits for the work before it like a synchronisation; DeviceToHost also
// takes CB_BITFLIP.
CHAOSBENCH_HOOK cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  return copy(r_cudaMemcpy, &cudaMemcpy, dst, src, count, kind);
}
CHAOSBENCH_HOOK cudaError_t cudaMemcpy_ptds(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  return copy(r_cudaMemcpy_ptds, &cudaMemcpy_ptds, dst, src, count, kind);
}

// Launches: CB_HANG blocks them. Never slowed: a launch returns as soon as the work is
// queued, so a slower GPU shows up in the synchronisation that waits for it, not here.
CHAOSBENCH_HOOK cudaError_t cudaLaunchKernel(const void* func, dim3 grid, dim3 block, void** args, size_t shared,
                                             cudaStream_t stream) {
  return runtime_call(Family::kLaunch, r_cudaLaunchKernel, &cudaLaunchKernel, func, grid, block, args, shared, stream);
}
CHAOSBENCH_HOOK cudaError_t cudaLaunchKernel_ptsz(const void* func, dim3 grid, dim3 block, void** args, size_t shared,
                                                  cudaStream_t stream) {
  return runtime_call(Family::kLaunch, r_cudaLaunchKernel_ptsz, &cudaLaunchKernel_ptsz, func, grid, block, args, shared, stream);
}
CHAOSBENCH_HOOK cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func, void** args) {
  return runtime_call(Family::kLaunch, r_cudaLaunchKernelExC, &cudaLaunchKernelExC, config, func, args);
}
CHAOSBENCH_HOOK cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t* config, const void* func, void** args) {
  return runtime_call(Family::kLaunch, r_cudaLaunchKernelExC_ptsz, &cudaLaunchKernelExC_ptsz, config, func, args);
}
CHAOSBENCH_HOOK cudaError_t cudaLaunchCooperativeKernel(const void* func, dim3 grid, dim3 block, void** args,
                                                        size_t shared, cudaStream_t stream) {
  return runtime_call(Family::kLaunch, r_cudaLaunchCooperativeKernel, &cudaLaunchCooperativeKernel, func, grid, block, args,
              shared, stream);
}
CHAOSBENCH_HOOK cudaError_t cudaLaunchCooperativeKernel_ptsz(const void* func, dim3 grid, dim3 block, void** args,
                                                             size_t shared, cudaStream_t stream) {
  return runtime_call(Family::kLaunch, r_cudaLaunchCooperativeKernel_ptsz, &cudaLaunchCooperativeKernel_ptsz, func, grid,
              block, args, shared, stream);
}
CHAOSBENCH_HOOK cudaError_t cudaGraphLaunch(cudaGraphExec_t graph, cudaStream_t stream) {
  return runtime_call(Family::kLaunch, r_cudaGraphLaunch, &cudaGraphLaunch, graph, stream);
}
CHAOSBENCH_HOOK cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t graph, cudaStream_t stream) {
  return runtime_call(Family::kLaunch, r_cudaGraphLaunch_ptsz, &cudaGraphLaunch_ptsz, graph, stream);
}

// Queries: under CB_HANG the work never completes, so they answer cudaErrorNotReady.
CHAOSBENCH_HOOK cudaError_t cudaStreamQuery(cudaStream_t stream) {
  return runtime_call(Family::kQuery, r_cudaStreamQuery, &cudaStreamQuery, stream);
}
CHAOSBENCH_HOOK cudaError_t cudaStreamQuery_ptsz(cudaStream_t stream) {
  return runtime_call(Family::kQuery, r_cudaStreamQuery_ptsz, &cudaStreamQuery_ptsz, stream);
}
CHAOSBENCH_HOOK cudaError_t cudaEventQuery(cudaEvent_t event) {
  return runtime_call(Family::kQuery, r_cudaEventQuery, &cudaEventQuery, event);
}

// The rest: only the sticky CB_XID error.
CHAOSBENCH_HOOK cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  return runtime_call(Family::kOther, r_cudaEventRecord, &cudaEventRecord, event, stream);
}
CHAOSBENCH_HOOK cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream) {
  return runtime_call(Family::kOther, r_cudaEventRecord_ptsz, &cudaEventRecord_ptsz, event, stream);
}
CHAOSBENCH_HOOK cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                                            cudaStream_t stream) {
  return runtime_call(Family::kOther, r_cudaMemcpyAsync, &cudaMemcpyAsync, dst, src, count, kind, stream);
}
CHAOSBENCH_HOOK cudaError_t cudaMemcpyAsync_ptsz(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                                                 cudaStream_t stream) {
  return runtime_call(Family::kOther, r_cudaMemcpyAsync_ptsz, &cudaMemcpyAsync_ptsz, dst, src, count, kind, stream);
}
CHAOSBENCH_HOOK cudaError_t cudaMemset(void* p, int value, size_t count) {
  return runtime_call(Family::kOther, r_cudaMemset, &cudaMemset, p, value, count);
}
CHAOSBENCH_HOOK cudaError_t cudaMemsetAsync(void* p, int value, size_t count, cudaStream_t stream) {
  return runtime_call(Family::kOther, r_cudaMemsetAsync, &cudaMemsetAsync, p, value, count, stream);
}
CHAOSBENCH_HOOK cudaError_t cudaFree(void* p) { return runtime_call(Family::kOther, r_cudaFree, &cudaFree, p); }
CHAOSBENCH_HOOK cudaError_t cudaFreeHost(void* p) { return runtime_call(Family::kOther, r_cudaFreeHost, &cudaFreeHost, p); }
CHAOSBENCH_HOOK cudaError_t cudaFreeAsync(void* p, cudaStream_t stream) {
  return runtime_call(Family::kOther, r_cudaFreeAsync, &cudaFreeAsync, p, stream);
}
CHAOSBENCH_HOOK cudaError_t cudaGetDeviceCount(int* count) {
  return runtime_call(Family::kOther, r_cudaGetDeviceCount, &cudaGetDeviceCount, count);
}
CHAOSBENCH_HOOK cudaError_t cudaSetDevice(int device) {
  return runtime_call(Family::kOther, r_cudaSetDevice, &cudaSetDevice, device);
}
CHAOSBENCH_HOOK cudaError_t cudaGetLastError() {
  const cudaError_t real = runtime_call(Family::kOther, r_cudaGetLastError, &cudaGetLastError);
  const int injected = std::exchange(tl_injected_runtime_error, 0);  // read resets, as the runtime's does
  return real == cudaSuccess && injected != 0 ? static_cast<cudaError_t>(injected) : real;
}
CHAOSBENCH_HOOK cudaError_t cudaPeekAtLastError() {
  const cudaError_t real = runtime_call(Family::kOther, r_cudaPeekAtLastError, &cudaPeekAtLastError);
  const int injected = tl_injected_runtime_error;
  return real == cudaSuccess && injected != 0 ? static_cast<cudaError_t>(injected) : real;
}

namespace chaosbench::faults::gpu::interposer {

std::span<const Hook> runtime_hooks() {
#define CB_HOOK_ENTRY(name) Hook{#name, reinterpret_cast<void*>(&::name), &r_##name}
  static const Hook kHooks[] = {
      CB_HOOK_ENTRY(cudaMalloc), CB_HOOK_ENTRY(cudaMallocManaged), CB_HOOK_ENTRY(cudaMallocHost),
      CB_HOOK_ENTRY(cudaHostAlloc), CB_HOOK_ENTRY(cudaMallocPitch), CB_HOOK_ENTRY(cudaMalloc3D),
      CB_HOOK_ENTRY(cudaMallocArray), CB_HOOK_ENTRY(cudaMalloc3DArray), CB_HOOK_ENTRY(cudaMallocAsync),
      CB_HOOK_ENTRY(cudaMallocAsync_ptsz), CB_HOOK_ENTRY(cudaMallocFromPoolAsync),
      CB_HOOK_ENTRY(cudaMallocFromPoolAsync_ptsz), CB_HOOK_ENTRY(cudaDeviceSynchronize),
      CB_HOOK_ENTRY(cudaStreamSynchronize), CB_HOOK_ENTRY(cudaStreamSynchronize_ptsz),
      CB_HOOK_ENTRY(cudaEventSynchronize), CB_HOOK_ENTRY(cudaMemcpy), CB_HOOK_ENTRY(cudaMemcpy_ptds),
      CB_HOOK_ENTRY(cudaLaunchKernel), CB_HOOK_ENTRY(cudaLaunchKernel_ptsz), CB_HOOK_ENTRY(cudaLaunchKernelExC),
      CB_HOOK_ENTRY(cudaLaunchKernelExC_ptsz), CB_HOOK_ENTRY(cudaLaunchCooperativeKernel),
      CB_HOOK_ENTRY(cudaLaunchCooperativeKernel_ptsz), CB_HOOK_ENTRY(cudaGraphLaunch),
      CB_HOOK_ENTRY(cudaGraphLaunch_ptsz), CB_HOOK_ENTRY(cudaStreamQuery), CB_HOOK_ENTRY(cudaStreamQuery_ptsz),
      CB_HOOK_ENTRY(cudaEventQuery), CB_HOOK_ENTRY(cudaEventRecord), CB_HOOK_ENTRY(cudaEventRecord_ptsz),
      CB_HOOK_ENTRY(cudaMemcpyAsync), CB_HOOK_ENTRY(cudaMemcpyAsync_ptsz), CB_HOOK_ENTRY(cudaMemset),
      CB_HOOK_ENTRY(cudaMemsetAsync), CB_HOOK_ENTRY(cudaFree), CB_HOOK_ENTRY(cudaFreeHost),
      CB_HOOK_ENTRY(cudaFreeAsync), CB_HOOK_ENTRY(cudaGetDeviceCount), CB_HOOK_ENTRY(cudaSetDevice),
      CB_HOOK_ENTRY(cudaGetLastError), CB_HOOK_ENTRY(cudaPeekAtLastError),
  };
#undef CB_HOOK_ENTRY
  return kHooks;
}

}  // namespace chaosbench::faults::gpu::interposer

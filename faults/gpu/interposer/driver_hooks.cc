// The CUDA driver API hooks, under the names libcuda.so.1 exports (cuMemAlloc_v2, not the
// cuMemAlloc macro; cuStreamSynchronize_ptsz for per-thread default stream code). A driver
// function reaches the program three ways, all covered:
//   - linked against libcuda: the call binds to the exported hook below;
//   - dlsym(handle, "cuMemAlloc_v2"): dlsym_hook.cc hands out the same hook;
//   - cuGetProcAddress("cuMemAlloc", ...), how the CUDA runtime and NCCL find every driver
//     function: the hooks of cuGetProcAddress/_v2 below replace the returned pointer with
//     the hook of the exported function it is (found by address, so a request for
//     "cuCtxSynchronize" at version 13000, which returns cuCtxSynchronize_v2, gets the _v2
//     hook and its prototype). A pointer that is no exported function is left unwrapped.
#include <cstring>

#include <cuda.h>
#include <dlfcn.h>

#include "faults/gpu/interposer/interposer.h"

// cuda.h maps cuGetProcAddress to _v2; the 4-argument original is still exported.
#undef cuGetProcAddress

namespace chaosbench::faults::gpu::interposer {
namespace {

// Calls hook `self`'s real function (same prototype) under `family`'s faults.
template <class... P, class... A>
CUresult call_with(Family family, HostBuffer copied, RealSymbol& real, CUresult (*self)(P...), A... args) {
  (void)self;
  return cuda_call<CUresult>(
      Layer::kDriver, family,
      [&] {
        auto* fn = reinterpret_cast<CUresult (*)(P...)>(resolve(real));
        return fn != nullptr ? fn(args...) : CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND;
      },
      copied);
}

template <class... P, class... A>
CUresult call(Family family, RealSymbol& real, CUresult (*self)(P...), A... args) {
  return call_with(family, HostBuffer{}, real, self, args...);
}

// True when `exported` is a version of the entry point `requested` names: itself, or it
// with a suffix (cuMemAlloc -> cuMemAlloc_v2, cuStreamSynchronize -> _ptsz).
bool is_version_of(const char* requested, const char* exported) {
  const std::size_t n = std::strlen(requested);
  return std::strncmp(requested, exported, n) == 0 && (exported[n] == '\0' || exported[n] == '_');
}

bool hooks_any_version_of(const char* requested) {
  for (const Hook& hook : driver_hooks()) {
    if (is_version_of(requested, hook.name)) return true;
  }
  return false;
}

// What cuGetProcAddress hands out for `requested`, whose real entry point is `fn`.
void* wrap_entry_point(const char* requested, void* fn) {
  if (requested == nullptr || fn == nullptr || !hooks_any_version_of(requested)) return fn;
  Dl_info info{};
  if (::dladdr(fn, &info) == 0) {
    debug_say("cuGetProcAddress: not in any loaded object, left unwrapped:", requested);
    return fn;
  }
  void* handed = fn;
  if (info.dli_saddr == fn && info.dli_sname != nullptr && is_version_of(requested, info.dli_sname)) {
    handed = hook_for(info.dli_sname, fn);
  } else if (info.dli_fname != nullptr) {
    // The same code may be exported under several names; ask its object for each version.
    if (void* object = ::dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD)) {
      for (const Hook& hook : driver_hooks()) {
        if (is_version_of(requested, hook.name) && real_dlsym()(object, hook.name) == fn) {
          handed = hook_for(hook.name, fn);
          break;
        }
      }
      ::dlclose(object);
    }
  }
  debug_say(handed != fn ? "cuGetProcAddress: wrapped" : "cuGetProcAddress: left unwrapped", requested);
  return handed;
}

#define CB_REAL(name) RealSymbol r_##name{#name, Library::kCudaDriver}
CB_REAL(cuGetProcAddress);
CB_REAL(cuGetProcAddress_v2);
CB_REAL(cuInit);
CB_REAL(cuMemAlloc_v2);
CB_REAL(cuMemAllocManaged);
CB_REAL(cuMemAllocPitch_v2);
CB_REAL(cuMemAllocHost_v2);
CB_REAL(cuMemHostAlloc);
CB_REAL(cuMemCreate);
CB_REAL(cuMemAllocAsync);
CB_REAL(cuMemAllocAsync_ptsz);
CB_REAL(cuMemAllocFromPoolAsync);
CB_REAL(cuMemAllocFromPoolAsync_ptsz);
CB_REAL(cuCtxSynchronize);
CB_REAL(cuCtxSynchronize_v2);
CB_REAL(cuStreamSynchronize);
CB_REAL(cuStreamSynchronize_ptsz);
CB_REAL(cuEventSynchronize);
CB_REAL(cuMemcpyDtoH_v2);
CB_REAL(cuMemcpyDtoH_v2_ptds);
CB_REAL(cuLaunchKernel);
CB_REAL(cuLaunchKernel_ptsz);
CB_REAL(cuLaunchKernelEx);
CB_REAL(cuLaunchKernelEx_ptsz);
CB_REAL(cuLaunchCooperativeKernel);
CB_REAL(cuLaunchCooperativeKernel_ptsz);
CB_REAL(cuGraphLaunch);
CB_REAL(cuGraphLaunch_ptsz);
CB_REAL(cuStreamQuery);
CB_REAL(cuStreamQuery_ptsz);
CB_REAL(cuEventQuery);
CB_REAL(cuEventRecord);
CB_REAL(cuEventRecord_ptsz);
CB_REAL(cuMemFree_v2);
CB_REAL(cuMemcpyHtoD_v2);
CB_REAL(cuMemcpyHtoD_v2_ptds);
CB_REAL(cuMemcpyDtoHAsync_v2);
CB_REAL(cuMemcpyDtoHAsync_v2_ptsz);
CB_REAL(cuMemcpyHtoDAsync_v2);
CB_REAL(cuMemcpyHtoDAsync_v2_ptsz);
#undef CB_REAL

}  // namespace
}  // namespace chaosbench::faults::gpu::interposer

using namespace chaosbench::faults::gpu::interposer;  // NOLINT: the hooks must be global

// Entry-point lookup: never faulted, so the runtime can initialise and then fail per call.
CHAOSBENCH_HOOK CUresult cuGetProcAddress(const char* symbol, void** pfn, int version, cuuint64_t flags) {
  auto* real = reinterpret_cast<CUresult (*)(const char*, void**, int, cuuint64_t)>(resolve(r_cuGetProcAddress));
  if (real == nullptr) return CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND;
  const CUresult result = real(symbol, pfn, version, flags);
  if (result == CUDA_SUCCESS && pfn != nullptr) *pfn = wrap_entry_point(symbol, *pfn);
  return result;
}
CHAOSBENCH_HOOK CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version, cuuint64_t flags,
                                             CUdriverProcAddressQueryResult* status) {
  auto* real = reinterpret_cast<decltype(&cuGetProcAddress_v2)>(resolve(r_cuGetProcAddress_v2));
  if (real == nullptr) return CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND;
  const CUresult result = real(symbol, pfn, version, flags, status);
  if (result == CUDA_SUCCESS && pfn != nullptr) *pfn = wrap_entry_point(symbol, *pfn);
  return result;
}

CHAOSBENCH_HOOK CUresult cuInit(unsigned int flags) { return call(Family::kOther, r_cuInit, &cuInit, flags); }

// Allocations: CB_OOM.
CHAOSBENCH_HOOK CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t size) {
  return call(Family::kAlloc, r_cuMemAlloc_v2, &cuMemAlloc_v2, p, size);
}
CHAOSBENCH_HOOK CUresult cuMemAllocManaged(CUdeviceptr* p, size_t size, unsigned int flags) {
  return call(Family::kAlloc, r_cuMemAllocManaged, &cuMemAllocManaged, p, size, flags);
}
CHAOSBENCH_HOOK CUresult cuMemAllocPitch_v2(CUdeviceptr* p, size_t* pitch, size_t width, size_t height,
                                            unsigned int element_size) {
  return call(Family::kAlloc, r_cuMemAllocPitch_v2, &cuMemAllocPitch_v2, p, pitch, width, height, element_size);
}
CHAOSBENCH_HOOK CUresult cuMemAllocHost_v2(void** p, size_t size) {
  return call(Family::kAlloc, r_cuMemAllocHost_v2, &cuMemAllocHost_v2, p, size);
}
CHAOSBENCH_HOOK CUresult cuMemHostAlloc(void** p, size_t size, unsigned int flags) {
  return call(Family::kAlloc, r_cuMemHostAlloc, &cuMemHostAlloc, p, size, flags);
}
CHAOSBENCH_HOOK CUresult cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size, const CUmemAllocationProp* prop,
                                     unsigned long long flags) {
  return call(Family::kAlloc, r_cuMemCreate, &cuMemCreate, handle, size, prop, flags);
}
CHAOSBENCH_HOOK CUresult cuMemAllocAsync(CUdeviceptr* p, size_t size, CUstream stream) {
  return call(Family::kAlloc, r_cuMemAllocAsync, &cuMemAllocAsync, p, size, stream);
}
CHAOSBENCH_HOOK CUresult cuMemAllocAsync_ptsz(CUdeviceptr* p, size_t size, CUstream stream) {
  return call(Family::kAlloc, r_cuMemAllocAsync_ptsz, &cuMemAllocAsync_ptsz, p, size, stream);
}
CHAOSBENCH_HOOK CUresult cuMemAllocFromPoolAsync(CUdeviceptr* p, size_t size, CUmemoryPool pool, CUstream stream) {
  return call(Family::kAlloc, r_cuMemAllocFromPoolAsync, &cuMemAllocFromPoolAsync, p, size, pool, stream);
}
CHAOSBENCH_HOOK CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr* p, size_t size, CUmemoryPool pool, CUstream stream) {
  return call(Family::kAlloc, r_cuMemAllocFromPoolAsync_ptsz, &cuMemAllocFromPoolAsync_ptsz, p, size, pool, stream);
}

// Synchronisations: CB_HANG blocks them, CB_SLOWDOWN stretches them.
CHAOSBENCH_HOOK CUresult cuCtxSynchronize() { return call(Family::kSync, r_cuCtxSynchronize, &cuCtxSynchronize); }
CHAOSBENCH_HOOK CUresult cuCtxSynchronize_v2(CUcontext context) {
  return call(Family::kSync, r_cuCtxSynchronize_v2, &cuCtxSynchronize_v2, context);
}
CHAOSBENCH_HOOK CUresult cuStreamSynchronize(CUstream stream) {
  return call(Family::kSync, r_cuStreamSynchronize, &cuStreamSynchronize, stream);
}
CHAOSBENCH_HOOK CUresult cuStreamSynchronize_ptsz(CUstream stream) {
  return call(Family::kSync, r_cuStreamSynchronize_ptsz, &cuStreamSynchronize_ptsz, stream);
}
CHAOSBENCH_HOOK CUresult cuEventSynchronize(CUevent event) {
  return call(Family::kSync, r_cuEventSynchronize, &cuEventSynchronize, event);
}
// A blocking device-to-host copy: a synchronisation, and CB_BITFLIP's target.
CHAOSBENCH_HOOK CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, size_t bytes) {
  return call_with(Family::kSync, HostBuffer{dst, bytes}, r_cuMemcpyDtoH_v2, &cuMemcpyDtoH_v2, dst, src, bytes);
}
CHAOSBENCH_HOOK CUresult cuMemcpyDtoH_v2_ptds(void* dst, CUdeviceptr src, size_t bytes) {
  return call_with(Family::kSync, HostBuffer{dst, bytes}, r_cuMemcpyDtoH_v2_ptds, &cuMemcpyDtoH_v2_ptds, dst, src,
                   bytes);
}

// Launches: CB_HANG blocks them; never slowed (they return before the work runs).
CHAOSBENCH_HOOK CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                        unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared,
                                        CUstream stream, void** params, void** extra) {
  return call(Family::kLaunch, r_cuLaunchKernel, &cuLaunchKernel, f, gx, gy, gz, bx, by, bz, shared, stream, params,
              extra);
}
CHAOSBENCH_HOOK CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                             unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared,
                                             CUstream stream, void** params, void** extra) {
  return call(Family::kLaunch, r_cuLaunchKernel_ptsz, &cuLaunchKernel_ptsz, f, gx, gy, gz, bx, by, bz, shared, stream,
              params, extra);
}
CHAOSBENCH_HOOK CUresult cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** params, void** extra) {
  return call(Family::kLaunch, r_cuLaunchKernelEx, &cuLaunchKernelEx, config, f, params, extra);
}
CHAOSBENCH_HOOK CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig* config, CUfunction f, void** params,
                                               void** extra) {
  return call(Family::kLaunch, r_cuLaunchKernelEx_ptsz, &cuLaunchKernelEx_ptsz, config, f, params, extra);
}
CHAOSBENCH_HOOK CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                                   unsigned int bx, unsigned int by, unsigned int bz,
                                                   unsigned int shared, CUstream stream, void** params) {
  return call(Family::kLaunch, r_cuLaunchCooperativeKernel, &cuLaunchCooperativeKernel, f, gx, gy, gz, bx, by, bz,
              shared, stream, params);
}
CHAOSBENCH_HOOK CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy,
                                                        unsigned int gz, unsigned int bx, unsigned int by,
                                                        unsigned int bz, unsigned int shared, CUstream stream,
                                                        void** params) {
  return call(Family::kLaunch, r_cuLaunchCooperativeKernel_ptsz, &cuLaunchCooperativeKernel_ptsz, f, gx, gy, gz, bx,
              by, bz, shared, stream, params);
}
CHAOSBENCH_HOOK CUresult cuGraphLaunch(CUgraphExec graph, CUstream stream) {
  return call(Family::kLaunch, r_cuGraphLaunch, &cuGraphLaunch, graph, stream);
}
CHAOSBENCH_HOOK CUresult cuGraphLaunch_ptsz(CUgraphExec graph, CUstream stream) {
  return call(Family::kLaunch, r_cuGraphLaunch_ptsz, &cuGraphLaunch_ptsz, graph, stream);
}

// Queries: CUDA_ERROR_NOT_READY under CB_HANG.
CHAOSBENCH_HOOK CUresult cuStreamQuery(CUstream stream) {
  return call(Family::kQuery, r_cuStreamQuery, &cuStreamQuery, stream);
}
CHAOSBENCH_HOOK CUresult cuStreamQuery_ptsz(CUstream stream) {
  return call(Family::kQuery, r_cuStreamQuery_ptsz, &cuStreamQuery_ptsz, stream);
}
CHAOSBENCH_HOOK CUresult cuEventQuery(CUevent event) { return call(Family::kQuery, r_cuEventQuery, &cuEventQuery, event); }

// The rest: only the sticky CB_XID error.
CHAOSBENCH_HOOK CUresult cuEventRecord(CUevent event, CUstream stream) {
  return call(Family::kOther, r_cuEventRecord, &cuEventRecord, event, stream);
}
CHAOSBENCH_HOOK CUresult cuEventRecord_ptsz(CUevent event, CUstream stream) {
  return call(Family::kOther, r_cuEventRecord_ptsz, &cuEventRecord_ptsz, event, stream);
}
CHAOSBENCH_HOOK CUresult cuMemFree_v2(CUdeviceptr p) { return call(Family::kOther, r_cuMemFree_v2, &cuMemFree_v2, p); }
CHAOSBENCH_HOOK CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src, size_t bytes) {
  return call(Family::kOther, r_cuMemcpyHtoD_v2, &cuMemcpyHtoD_v2, dst, src, bytes);
}
CHAOSBENCH_HOOK CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr dst, const void* src, size_t bytes) {
  return call(Family::kOther, r_cuMemcpyHtoD_v2_ptds, &cuMemcpyHtoD_v2_ptds, dst, src, bytes);
}
CHAOSBENCH_HOOK CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t bytes, CUstream stream) {
  return call(Family::kOther, r_cuMemcpyDtoHAsync_v2, &cuMemcpyDtoHAsync_v2, dst, src, bytes, stream);
}
CHAOSBENCH_HOOK CUresult cuMemcpyDtoHAsync_v2_ptsz(void* dst, CUdeviceptr src, size_t bytes, CUstream stream) {
  return call(Family::kOther, r_cuMemcpyDtoHAsync_v2_ptsz, &cuMemcpyDtoHAsync_v2_ptsz, dst, src, bytes, stream);
}
CHAOSBENCH_HOOK CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t bytes, CUstream stream) {
  return call(Family::kOther, r_cuMemcpyHtoDAsync_v2, &cuMemcpyHtoDAsync_v2, dst, src, bytes, stream);
}
CHAOSBENCH_HOOK CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dst, const void* src, size_t bytes, CUstream stream) {
  return call(Family::kOther, r_cuMemcpyHtoDAsync_v2_ptsz, &cuMemcpyHtoDAsync_v2_ptsz, dst, src, bytes, stream);
}

namespace chaosbench::faults::gpu::interposer {

std::span<const Hook> driver_hooks() {
#define CB_HOOK_ENTRY(name) Hook{#name, reinterpret_cast<void*>(&::name), &r_##name}
  static const Hook kHooks[] = {
      CB_HOOK_ENTRY(cuGetProcAddress), CB_HOOK_ENTRY(cuGetProcAddress_v2), CB_HOOK_ENTRY(cuInit),
      CB_HOOK_ENTRY(cuMemAlloc_v2), CB_HOOK_ENTRY(cuMemAllocManaged), CB_HOOK_ENTRY(cuMemAllocPitch_v2),
      CB_HOOK_ENTRY(cuMemAllocHost_v2), CB_HOOK_ENTRY(cuMemHostAlloc), CB_HOOK_ENTRY(cuMemCreate),
      CB_HOOK_ENTRY(cuMemAllocAsync), CB_HOOK_ENTRY(cuMemAllocAsync_ptsz), CB_HOOK_ENTRY(cuMemAllocFromPoolAsync),
      CB_HOOK_ENTRY(cuMemAllocFromPoolAsync_ptsz), CB_HOOK_ENTRY(cuCtxSynchronize), CB_HOOK_ENTRY(cuCtxSynchronize_v2),
      CB_HOOK_ENTRY(cuStreamSynchronize), CB_HOOK_ENTRY(cuStreamSynchronize_ptsz), CB_HOOK_ENTRY(cuEventSynchronize),
      CB_HOOK_ENTRY(cuMemcpyDtoH_v2), CB_HOOK_ENTRY(cuMemcpyDtoH_v2_ptds), CB_HOOK_ENTRY(cuLaunchKernel),
      CB_HOOK_ENTRY(cuLaunchKernel_ptsz), CB_HOOK_ENTRY(cuLaunchKernelEx), CB_HOOK_ENTRY(cuLaunchKernelEx_ptsz),
      CB_HOOK_ENTRY(cuLaunchCooperativeKernel), CB_HOOK_ENTRY(cuLaunchCooperativeKernel_ptsz),
      CB_HOOK_ENTRY(cuGraphLaunch), CB_HOOK_ENTRY(cuGraphLaunch_ptsz), CB_HOOK_ENTRY(cuStreamQuery),
      CB_HOOK_ENTRY(cuStreamQuery_ptsz), CB_HOOK_ENTRY(cuEventQuery), CB_HOOK_ENTRY(cuEventRecord),
      CB_HOOK_ENTRY(cuEventRecord_ptsz), CB_HOOK_ENTRY(cuMemFree_v2), CB_HOOK_ENTRY(cuMemcpyHtoD_v2),
      CB_HOOK_ENTRY(cuMemcpyHtoD_v2_ptds), CB_HOOK_ENTRY(cuMemcpyDtoHAsync_v2),
      CB_HOOK_ENTRY(cuMemcpyDtoHAsync_v2_ptsz), CB_HOOK_ENTRY(cuMemcpyHtoDAsync_v2),
      CB_HOOK_ENTRY(cuMemcpyHtoDAsync_v2_ptsz),
  };
#undef CB_HOOK_ENTRY
  return kHooks;
}

}  // namespace chaosbench::faults::gpu::interposer

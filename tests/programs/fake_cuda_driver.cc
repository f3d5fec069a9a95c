// A stand-in libcuda.so.1 for the interposer tests: the few driver entry points
// cuda_driver_probe.cc calls, succeeding as a working GPU would, so the tests can check
// what only shows on success (a slowed synchronisation's time, flipped bits in a copy) and
// that cuGetProcAddress's pointers get wrapped. Linked -Bsymbolic, so the pointers its
// cuGetProcAddress hands out are its own functions, as the real driver's are, not whatever
// the global scope binds those names to (the interposer's hooks).
//
// cuCtxSynchronize and cuCtxSynchronize_v2 take 100 ms: the "GPU work" they wait for.
#include <chrono>
#include <cstring>
#include <thread>

#include <cuda.h>

#undef cuGetProcAddress

namespace {
constexpr auto kSyncTime = std::chrono::milliseconds(100);
}

extern "C" {

__attribute__((visibility("default"))) CUresult cuInit(unsigned int) { return CUDA_SUCCESS; }

__attribute__((visibility("default"))) CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t) {
  *p = 0x1000;
  return CUDA_SUCCESS;
}

__attribute__((visibility("default"))) CUresult cuCtxSynchronize() {
  std::this_thread::sleep_for(kSyncTime);
  return CUDA_SUCCESS;
}

__attribute__((visibility("default"))) CUresult cuCtxSynchronize_v2(CUcontext) {
  std::this_thread::sleep_for(kSyncTime);
  return CUDA_SUCCESS;
}

__attribute__((visibility("default"))) CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr, size_t bytes) {
  std::memset(dst, 0, bytes);
  return CUDA_SUCCESS;
}

__attribute__((visibility("default"))) CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version,
                                                                     cuuint64_t, CUdriverProcAddressQueryResult* status) {
  void* fn = nullptr;
  if (std::strcmp(symbol, "cuInit") == 0) fn = reinterpret_cast<void*>(&cuInit);
  if (std::strcmp(symbol, "cuMemAlloc") == 0) fn = reinterpret_cast<void*>(&cuMemAlloc_v2);
  if (std::strcmp(symbol, "cuMemcpyDtoH") == 0) fn = reinterpret_cast<void*>(&cuMemcpyDtoH_v2);
  if (std::strcmp(symbol, "cuGetProcAddress") == 0) fn = reinterpret_cast<void*>(&cuGetProcAddress_v2);
  if (std::strcmp(symbol, "cuCtxSynchronize") == 0) {
    fn = version >= 13000 ? reinterpret_cast<void*>(&cuCtxSynchronize_v2) : reinterpret_cast<void*>(&cuCtxSynchronize);
  }
  *pfn = fn;
  if (status != nullptr) *status = fn ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return fn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

__attribute__((visibility("default"))) CUresult cuGetProcAddress(const char* symbol, void** pfn, int version,
                                                                  cuuint64_t flags) {
  return cuGetProcAddress_v2(symbol, pfn, version, flags, nullptr);
}

}  // extern "C"

// Internal to bench/train/cuda/: turns CUDA, cuBLAS and NCCL status codes into
// bench::DeviceError, so every call site is one line and every message has one form:
// "<call>: <library's text> (<code name> <code>)".
// Sticky CUDA errors (the context is lost; only a new process recovers) are those the
// CUDA documentation says leave "the process in an inconsistent state", plus ECC (214)
// and unavailable devices (46), which the fault layer treats the same way.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <string>

#include "bench/common/device_error.h"
#include "bench/train/cuda/cublas_library.h"

namespace chaosbench::bench::train::cuda {

inline bool cuda_error_is_sticky(cudaError_t e) {
  switch (static_cast<int>(e)) {
    case 46:   // cudaErrorDevicesUnavailable
    case 214:  // cudaErrorECCUncorrectable
    case 700:  // cudaErrorIllegalAddress
    case 702:  // cudaErrorLaunchTimeout
    case 714:  // cudaErrorHardwareStackError
    case 715:  // cudaErrorIllegalInstruction
    case 716:  // cudaErrorMisalignedAddress
    case 717:  // cudaErrorInvalidAddressSpace
    case 718:  // cudaErrorInvalidPc
    case 719:  // cudaErrorLaunchFailure
      return true;
    default:
      return false;
  }
}

// Also clears the thread's last-error state, so that a later launch check does not
// report this error again (a sticky error stays: it is the context's).
[[noreturn]] inline void throw_cuda(cudaError_t e, const std::string& call) {
  (void)cudaGetLastError();
  throw DeviceError(DeviceError::Source::kDevice, static_cast<int>(e),
                    call + ": " + cudaGetErrorString(e) + " (" + cudaGetErrorName(e) + " " +
                        std::to_string(static_cast<int>(e)) + ")",
                    0, cuda_error_is_sticky(e));
}

inline void check_cuda(cudaError_t e, const char* call) {
  if (e != cudaSuccess) throw_cuda(e, call);
}

// A cuBLAS failure is often a CUDA error underneath (a sticky 700 from an earlier kernel):
// that code is reported when one is pending, as it is the cause; the cublasStatus_t
// otherwise (its codes are small integers apart from CUDA's: 13 execution failed, ...).
inline void check_cublas(cublasStatus_t s, const char* call) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  const cudaError_t pending = cudaPeekAtLastError();
  const CublasLibrary& blas = cublas_library();  // loaded: a status came from it
  if (pending != cudaSuccess) throw_cuda(pending, std::string(call) + " (" + blas.status_name(s) + ")");
  throw DeviceError(DeviceError::Source::kDevice, static_cast<int>(s),
                    std::string(call) + ": " + blas.status_string(s) + " (" + blas.status_name(s) + " " +
                        std::to_string(static_cast<int>(s)) + ")");
}

[[noreturn]] inline void throw_nccl(ncclResult_t r, const std::string& call, ncclComm_t comm) {
  std::string what = call + ": " + ncclGetErrorString(r) + " (ncclResult_t " + std::to_string(static_cast<int>(r)) + ")";
  const char* last = ncclGetLastError(comm);
  if (last != nullptr && *last != '\0') what += ": " + std::string(last);
  throw DeviceError(DeviceError::Source::kCollective, static_cast<int>(r), what);
}

}  // namespace chaosbench::bench::train::cuda

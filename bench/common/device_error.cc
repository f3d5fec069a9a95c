// The names of CUDA and NCCL error codes, as plain tables: this file is built with or
// without a CUDA toolkit, so it cannot call cudaGetErrorString or ncclGetErrorString.
// The wording is the libraries' own (CUDA runtime 13.0, NCCL 2.28); NCCL's
// "(run with NCCL_DEBUG=... for details)" hints are left off, as they name no error.
#include "bench/common/device_error.h"

#include <cstdio>

namespace chaosbench::bench {
namespace {

struct Name {
  int code;
  const char* text;
};

// cudaError_t codes a device or a GPU fault can surface, with cudaGetErrorString's text.
constexpr Name kCudaNames[] = {
    {0, "no error"},
    {1, "invalid argument"},
    {2, "out of memory"},
    {3, "initialization error"},
    {4, "driver shutting down"},
    {35, "CUDA driver version is insufficient for CUDA runtime version"},
    {46, "CUDA-capable device(s) is/are busy or unavailable"},
    {98, "invalid device function"},
    {100, "no CUDA-capable device is detected"},
    {101, "invalid device ordinal"},
    {201, "invalid device context"},
    {209, "no kernel image is available for execution on the device"},
    {214, "uncorrectable ECC error encountered"},
    {220, "uncorrectable NVLink error detected during the execution"},
    {400, "invalid resource handle"},
    {700, "an illegal memory access was encountered"},
    {702, "the launch timed out and was terminated"},
    {709, "context is destroyed"},
    {710, "device-side assert triggered"},
    {714, "hardware stack error"},
    {715, "an illegal instruction was encountered"},
    {716, "misaligned address"},
    {717, "operation not supported on global/shared address space"},
    {718, "invalid program counter"},
    {719, "unspecified launch failure"},
    {800, "operation not permitted"},
    {801, "operation not supported"},
    {802, "system not yet initialized"},
    {803, "system has unsupported display driver / cuda driver combination"},
    {999, "unknown error"},
};

// ncclResult_t, which is dense from 0.
constexpr const char* kNcclNames[] = {
    "no error",
    "unhandled cuda error",
    "unhandled system error",
    "internal error - please report this issue to the NCCL developers",
    "invalid argument",
    "invalid usage",
    "remote process exited or there was a network error",
    "NCCL operation in progress",
};

}  // namespace

const char* cuda_error_name(int code) {
  for (const auto& n : kCudaNames)
    if (n.code == code) return n.text;
  // Valid until this thread's next call with an unknown code.
  thread_local char unknown[32];
  std::snprintf(unknown, sizeof unknown, "CUDA error %d", code);
  return unknown;
}

const char* nccl_error_name(int code) {
  if (code >= 0 && code < static_cast<int>(sizeof kNcclNames / sizeof kNcclNames[0])) return kNcclNames[code];
  return "unknown result code";
}

}  // namespace chaosbench::bench

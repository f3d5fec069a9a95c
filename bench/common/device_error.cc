#include "bench/common/device_error.h"

namespace chaosbench::bench {

// The CUDA runtime's cudaGetErrorString wording for the codes faults surface and the
// ones a program without a driver sees (CUDA 13 headers; CUresult uses the same numbers).
const char* cuda_error_name(int code) {
  switch (code) {
    case 0: return "no error";
    case 1: return "invalid argument";
    case 2: return "out of memory";
    case 3: return "initialization error";
    case 35: return "CUDA driver version is insufficient for CUDA runtime version";
    case 46: return "all CUDA-capable devices are busy or unavailable";
    case 100: return "no CUDA-capable device is detected";
    case 214: return "uncorrectable ECC error encountered";
    case 220: return "uncorrectable NVLink error detected during the execution";
    case 700: return "an illegal memory access was encountered";
    case 719: return "unspecified launch failure";
    default: return "CUDA error";
  }
}

// ncclGetErrorString's wording (nccl.h, ncclResult_t).
const char* nccl_error_name(int code) {
  switch (code) {
    case 0: return "no error";
    case 1: return "unhandled cuda error";
    case 2: return "unhandled system error";
    case 3: return "internal error";
    case 4: return "invalid argument";
    case 5: return "invalid usage";
    case 6: return "remote process exited or there was a network error";
    case 7: return "operation in progress";
    default: return "NCCL error";
  }
}

}  // namespace chaosbench::bench

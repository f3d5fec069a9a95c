// An error from a device or collective call, as CUDA and NCCL report them: the numeric
// code (a cudaError_t/CUresult for device calls, an ncclResult_t for collectives), the
// Xid a driver would log for a hardware fault (0 when none), and whether the error is
// sticky (the CUDA context is lost: every later call fails, only a new process recovers).
// Thrown by the trainer's devices (CPU with injected faults, CUDA for real) and by the
// fault layer (bench/common/device_faults.h); the trainer reports it as failure_detected.
#pragma once

#include <stdexcept>
#include <string>

namespace chaosbench::bench {

class DeviceError : public std::runtime_error {
 public:
  enum class Source { kDevice, kCollective };
  DeviceError(Source source, int code, const std::string& what, int xid = 0, bool sticky = false)
      : std::runtime_error(what), source_(source), code_(code), xid_(xid), sticky_(sticky) {}
  Source source() const { return source_; }
  int code() const { return code_; }
  int xid() const { return xid_; }
  bool sticky() const { return sticky_; }

 private:
  Source source_;
  int code_;
  int xid_;
  bool sticky_;
};

// "out of memory" for 2, "uncorrectable ECC error encountered" for 214, ...: the CUDA
// runtime's own wording for the codes GPU faults surface; "CUDA error N" otherwise.
const char* cuda_error_name(int code);
// ncclResult_t's wording: "unhandled system error" for 2, "remote process exited or
// there was a network error" for 6, ...
const char* nccl_error_name(int code);

}  // namespace chaosbench::bench

// The seam between the always-built device factory (device_factory.cc) and the CUDA layer
// (bench/train/cuda/), which is a shared module of its own, libchaosbench_cuda_workers.so,
// found beside the binary (common/files/install_layout.h) and opened with dlopen the first time
// a GPU is asked for. The chaosbench binary therefore links no CUDA library: it starts,
// and its Debian package installs, on hosts without CUDA, and a GPU workload uses the
// CUDA runtime, NCCL and cuBLAS where they are. The module links libcudart and libnccl
// (cuBLAS it opens itself, cuda/cublas_library.h); where one is missing, dlopen fails
// and its message names the library.
// The module exports one C function, kCudaWorkersEntry, which returns the table below.
// C++ types cross the seam (std::string, std::unique_ptr, exceptions: DeviceError and
// CollectiveError are caught by name, as g++ compares type_info), so the module must come
// from the same build as the binary: the factory checks `abi` and `version` first (their
// place in the table never changes) and refuses a module from another build.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bench/compute/device.h"
#include "bench/train/comm/gradient_reducer.h"
#include "bench/compute/mlp_model.h"

namespace gloo::rendezvous {
class Store;
}

namespace chaosbench::bench::train {

inline constexpr const char* kCudaWorkersLibrary = "libchaosbench_cuda_workers.so";
inline constexpr const char* kCudaWorkersEntry = "chaosbench_cuda_workers";
// Raised whenever the table or a signature in it changes.
inline constexpr int kCudaWorkersAbi = 1;

// The CUDA layer's entry points: cuda/cuda_train.h says what each does.
struct CudaWorkers {
  int abi;              // kCudaWorkersAbi of the module's build
  const char* version;  // the chaosbench version it was built with
  std::unique_ptr<Device> (*make_device)(int device_index);
  int (*device_count)(std::string* why);
  std::unique_ptr<GradientReducer> (*make_nccl_reducer)(Device& device, gloo::rendezvous::Store& store,
                                                       const std::string& key_prefix, int rank, int world_size,
                                                       float* grads, const std::vector<LayerSpan>& spans,
                                                       std::uint64_t bucket_bytes, std::chrono::milliseconds timeout,
                                                       std::size_t extras);
};

}  // namespace chaosbench::bench::train

// Defined only in the module; the factory finds it with dlsym.
extern "C" const chaosbench::bench::train::CudaWorkers* chaosbench_cuda_workers();

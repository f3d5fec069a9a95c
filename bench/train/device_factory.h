// Makes the trainer's device and its NCCL gradient reducer by name, in any build and on
// any host: the CUDA layer (bench/train/cuda/) is compiled only when a CUDA toolkit was
// found (CHAOSBENCH_CUDA=ON or AUTO), into a module of its own that is opened on the
// first call that needs it (cuda_workers.h). Without it, "cuda" and the NCCL reducer
// throw std::runtime_error: kNoCudaMessage when it was not built (cuda_built() false),
// else why it does not load (a CUDA library missing on this host). Callers and tests need
// no #if of their own.
// Threads: plain functions, any thread (the module is opened once); what they make
// follows its own rules (device.h, gradient_reducer.h).
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

inline constexpr const char* kNoCudaMessage =
    "this chaosbench was built without CUDA (CHAOSBENCH_CUDA=OFF or no toolkit)";

// Whether the CUDA layer was built with this binary.
bool cuda_built();

// Where the CUDA layer's module is (<binary dir>/../lib/libchaosbench_cuda_workers.so;
// empty when it was not built) and whether it loads: `error` is empty when it does, else
// says why. Opens it on the first call (the CUDA runtime and NCCL load with it; no GPU
// is touched).
struct CudaLayerStatus {
  std::string path;
  std::string error;
};
CudaLayerStatus cuda_layer_status();

// "cpu": make_cpu_device(threads). "cuda": the CUDA device on GPU `cuda_index` (threads
// unused; throws bench::DeviceError when the GPU cannot be used). Anything else:
// std::invalid_argument.
std::unique_ptr<Device> make_device(const std::string& kind, int threads, int cuda_index = 0);

// How many GPUs the CUDA runtime sees; 0 without the CUDA layer, a driver or a device,
// and then *why (if given) says which, with the CUDA error code.
int cuda_device_count(std::string* why = nullptr);

// The NCCL gradient reducer (cuda/nccl_allreducer.h) over `device`, which must come from
// make_device("cuda", ...) (std::invalid_argument otherwise). `store` is the rendezvous
// store every rank shares; `key_prefix` must be unique to this communicator (e.g. the
// generation), as rank 0 publishes the NCCL id under "<key_prefix>/nccl_unique_id".
// `rank` is this rank's index in [0, world_size); grads and spans are the model's
// (MlpModel::grads(), spans()). Blocks until every rank has joined or `timeout` passed:
// throws CollectiveError (timeout) or bench::DeviceError (an NCCL or CUDA error).
std::unique_ptr<GradientReducer> make_nccl_reducer(Device& device, gloo::rendezvous::Store& store,
                                                   const std::string& key_prefix, int rank, int world_size,
                                                   float* grads, const std::vector<LayerSpan>& spans,
                                                   std::uint64_t bucket_bytes, std::chrono::milliseconds timeout,
                                                   std::size_t extras);

}  // namespace chaosbench::bench::train

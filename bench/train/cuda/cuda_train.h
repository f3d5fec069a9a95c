// The entry points of the CUDA layer (the module libchaosbench_cuda_workers.so), free of
// CUDA and NCCL headers: cuda_workers_entry.cc puts them in the table the device factory
// (bench/train/device_factory.h) loads (bench/train/cuda_workers.h). Everything outside
// the module goes through the factory, which works in any build and on any host.
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

namespace chaosbench::bench::train::cuda {

// A CudaDevice (cuda_device.h) on GPU `device_index`. Throws bench::DeviceError.
std::unique_ptr<Device> make_cuda_device(int device_index);

// cudaGetDeviceCount, 0 on any error; when 0, *why (if given) says why, with the code.
int cuda_device_count(std::string* why);

// An NcclGradientAllreducer (nccl_allreducer.h) on `device`, which must be a CudaDevice
// (std::invalid_argument otherwise).
std::unique_ptr<GradientReducer> make_nccl_allreducer(Device& device, gloo::rendezvous::Store& store,
                                                      const std::string& key_prefix, int rank, int world_size,
                                                      float* grads, const std::vector<LayerSpan>& spans,
                                                      std::uint64_t bucket_bytes, std::chrono::milliseconds timeout,
                                                      std::size_t extras);

}  // namespace chaosbench::bench::train::cuda

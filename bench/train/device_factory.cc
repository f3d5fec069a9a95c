// The device factory (device_factory.h): the only always-built file that knows whether
// the CUDA layer is linked in (CHAOSBENCH_HAVE_CUDA, set on chaosbench_bench with it).
#include "bench/train/device_factory.h"

#include <stdexcept>

#include "bench/train/cpu_device.h"

#ifndef CHAOSBENCH_HAVE_CUDA
#define CHAOSBENCH_HAVE_CUDA 0
#endif
#if CHAOSBENCH_HAVE_CUDA
#include "bench/train/cuda/cuda_train.h"
#endif

namespace chaosbench::bench::train {

bool cuda_built() { return CHAOSBENCH_HAVE_CUDA != 0; }

std::unique_ptr<Device> make_device(const std::string& kind, int threads, int cuda_index) {
  if (kind == "cpu") return make_cpu_device(threads);
  if (kind == "cuda") {
#if CHAOSBENCH_HAVE_CUDA
    return cuda::make_cuda_device(cuda_index);
#else
    (void)cuda_index;
    throw std::runtime_error(kNoCudaMessage);
#endif
  }
  throw std::invalid_argument("unknown device '" + kind + "' (cpu or cuda)");
}

int cuda_device_count(std::string* why) {
#if CHAOSBENCH_HAVE_CUDA
  return cuda::cuda_device_count(why);
#else
  if (why != nullptr) *why = kNoCudaMessage;
  return 0;
#endif
}

std::unique_ptr<GradientReducer> make_nccl_reducer(Device& device, gloo::rendezvous::Store& store,
                                                   const std::string& key_prefix, int rank, int world_size,
                                                   float* grads, const std::vector<LayerSpan>& spans,
                                                   std::uint64_t bucket_bytes, std::chrono::milliseconds timeout,
                                                   std::size_t extras) {
#if CHAOSBENCH_HAVE_CUDA
  return cuda::make_nccl_allreducer(device, store, key_prefix, rank, world_size, grads, spans, bucket_bytes, timeout,
                                    extras);
#else
  (void)device, (void)store, (void)key_prefix, (void)rank, (void)world_size, (void)grads, (void)spans,
      (void)bucket_bytes, (void)timeout, (void)extras;
  throw std::runtime_error(kNoCudaMessage);
#endif
}

}  // namespace chaosbench::bench::train

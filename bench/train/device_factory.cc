// The device factory (device_factory.h): the only always-built file that knows whether
// the CUDA layer was built (CHAOSBENCH_HAVE_CUDA, set on chaosbench_bench with it), and
// the one that opens its module (cuda_workers.h). The module is opened once, on first
// use, and never closed: it stays for the life of the process, as a linked library would.
#include "bench/train/device_factory.h"

#include <dlfcn.h>

#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "bench/compute/cpu_device.h"
#include "bench/train/cuda_workers.h"
#include "common/files/install_layout.h"

#ifndef CHAOSBENCH_HAVE_CUDA
#define CHAOSBENCH_HAVE_CUDA 0
#endif

namespace chaosbench::bench::train {
namespace {

struct OpenedLayer {
  CudaLayerStatus status;
  const CudaWorkers* workers = nullptr;  // null when status.error says why
};

OpenedLayer open_layer() {
  OpenedLayer l;
  if (!cuda_built()) {
    l.status.error = kNoCudaMessage;
    return l;
  }
  l.status.path = common::library_beside(common::self_executable(), kCudaWorkersLibrary);
  void* handle = ::dlopen(l.status.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    l.status.error = fmt::format(
        "the CUDA layer {} does not load: {} (a GPU workload needs the CUDA runtime and NCCL this chaosbench was "
        "built with: their directory in ld.so.conf or LD_LIBRARY_PATH)",
        l.status.path, why != nullptr ? why : "dlopen failed");
    return l;
  }
  using Entry = const CudaWorkers* (*)();
  auto entry = reinterpret_cast<Entry>(::dlsym(handle, kCudaWorkersEntry));
  const CudaWorkers* workers = entry != nullptr ? entry() : nullptr;
  if (workers == nullptr) {
    l.status.error = fmt::format("the CUDA layer {} has no {}", l.status.path, kCudaWorkersEntry);
  } else if (workers->abi != kCudaWorkersAbi || std::string(workers->version) != CHAOSBENCH_VERSION) {
    l.status.error = fmt::format("the CUDA layer {} is from another build (chaosbench {}, seam {}; this is {}, seam {})",
                                 l.status.path, workers->version, workers->abi, CHAOSBENCH_VERSION, kCudaWorkersAbi);
  } else {
    l.workers = workers;
  }
  return l;
}

const OpenedLayer& layer() {
  static const OpenedLayer opened = open_layer();
  return opened;
}

// The loaded table; throws std::runtime_error with the reason it is not there.
const CudaWorkers& workers() {
  const OpenedLayer& l = layer();
  if (l.workers == nullptr) throw std::runtime_error(l.status.error);
  return *l.workers;
}

}  // namespace

bool cuda_built() { return CHAOSBENCH_HAVE_CUDA != 0; }

CudaLayerStatus cuda_layer_status() { return layer().status; }

std::unique_ptr<Device> make_device(const std::string& kind, int threads, int cuda_index) {
  if (kind == "cpu") return make_cpu_device(threads);
  if (kind == "cuda") return workers().make_device(cuda_index);
  throw std::invalid_argument("unknown device '" + kind + "' (cpu or cuda)");
}

int cuda_device_count(std::string* why) {
  const OpenedLayer& l = layer();
  if (l.workers != nullptr) return l.workers->device_count(why);
  if (why != nullptr) *why = l.status.error;
  return 0;
}

std::unique_ptr<GradientReducer> make_nccl_reducer(Device& device, gloo::rendezvous::Store& store,
                                                   const std::string& key_prefix, int rank, int world_size,
                                                   float* grads, const std::vector<LayerSpan>& spans,
                                                   std::uint64_t bucket_bytes, std::chrono::milliseconds timeout,
                                                   std::size_t extras) {
  return workers().make_nccl_reducer(device, store, key_prefix, rank, world_size, grads, spans, bucket_bytes, timeout,
                                     extras);
}

}  // namespace chaosbench::bench::train

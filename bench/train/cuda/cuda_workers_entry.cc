// The CUDA layer module's one exported symbol (bench/train/cuda_workers.h): the table of
// its entry points. Everything else in libchaosbench_cuda_workers.so is hidden.
#include "bench/train/cuda/cuda_train.h"
#include "bench/train/cuda_workers.h"

extern "C" __attribute__((visibility("default"))) const chaosbench::bench::train::CudaWorkers*
chaosbench_cuda_workers() {
  namespace t = chaosbench::bench::train;
  static const t::CudaWorkers table{t::kCudaWorkersAbi, CHAOSBENCH_VERSION, &t::cuda::make_cuda_device,
                                    &t::cuda::cuda_device_count, &t::cuda::make_nccl_allreducer};
  return &table;
}

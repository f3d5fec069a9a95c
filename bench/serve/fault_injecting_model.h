// An InferenceModel that acts out the GPU faults armed in the replica's control block
// (bench/common/device_faults.h) around another model, as a GPU inference server meets
// them: a sticky device error (gpu.xid) fails this batch and every later one, and the
// replica reports itself not ready; an allocation failure (gpu.oom) fails the batch it
// hits; a hang (gpu.hang) blocks the batch while armed, so requests queue and time out;
// a slowdown (gpu.slowdown) makes each batch take factor times as long. A failed batch is
// answered 500 with the CUDA error by the server. Bit flips and collective faults do not
// apply to a single replica's forward pass.
// Threads: as the wrapped model (one batching thread).
#pragma once

#include <memory>

#include "bench/common/device_faults.h"
#include "bench/serve/inference_model.h"

namespace chaosbench::bench::serve {

// `inner` itself when `faults` is inactive.
std::unique_ptr<InferenceModel> with_faults(std::unique_ptr<InferenceModel> inner,
                                            std::shared_ptr<DeviceFaults> faults);

}  // namespace chaosbench::bench::serve

// A Device that acts out the GPU faults armed in the rank's control block around another
// Device (the CPU one here; the CUDA one on a GPU): before every call, a sticky device
// error (gpu.xid) throws and a hang (gpu.hang) blocks; allocations and the step's
// workspace fail under gpu.oom; the time of every compute call is stretched under
// gpu.slowdown. The wrapped device's results are returned unchanged otherwise.
// Bit flips are not here: they corrupt a named tensor (gradients, parameters), which only
// the trainer can name (trainer.cc, with DeviceFaults::bitflip).
// Threads: as the wrapped device.
#pragma once

#include <memory>

#include "bench/common/device_faults.h"
#include "bench/compute/device.h"
#include "bench/train/comm/gradient_reducer.h"

namespace chaosbench::bench::train {

// `inner` itself when `faults` is inactive.
std::unique_ptr<Device> with_faults(std::unique_ptr<Device> inner, std::shared_ptr<DeviceFaults> faults);

// A gradient reducer that fails (collective.error) or blocks (collective.hang) a step's
// collectives before its first bucket is queued, for reducers that do not check per
// bucket themselves (the NCCL one; the gloo one checks before each bucket). `inner`
// itself when inactive.
std::unique_ptr<GradientReducer> with_faults(std::unique_ptr<GradientReducer> inner,
                                             std::shared_ptr<DeviceFaults> faults);

}  // namespace chaosbench::bench::train

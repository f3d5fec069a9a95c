// Built instead of nccl_hooks.cc when nccl.h is not found: the interposer then hooks no
// NCCL call, and collectives pass through untouched.
#include "faults/gpu/interposer/interposer.h"

namespace chaosbench::faults::gpu::interposer {
std::span<const Hook> nccl_hooks() { return {}; }
}  // namespace chaosbench::faults::gpu::interposer

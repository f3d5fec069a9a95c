// What results.json's environment.backends["train"] says of a train run: the device its
// ranks computed on and how their gradients were summed, as the workload's settings chose
// them (bench/train/train_settings.h: device, backend, algorithm, parallel) for as many
// ranks as trained together. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/train/train_settings.h"

namespace chaosbench::harness {

// "cpu device (OpenBLAS), tcp_ring allreduce (the trainer's own TCP ring)",
// "cuda device (cuBLAS), NCCL allreduce", "cpu device (OpenBLAS), gloo/tcp ring
// allreduce", ...; with tp or pp above 1 the layout and the links of its groups too.
// `world`: the most ranks that trained together; below 2 no gradient is reduced.
std::string describe_train_run(const bench::train::TrainSettings& settings, std::int64_t world);

}  // namespace chaosbench::harness

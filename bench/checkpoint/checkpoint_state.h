// What a checkpoint holds: the step count and named host buffers (parameters and the
// optimizer's state), plus a key naming the model and optimizer shape so a checkpoint of
// another model is never loaded into this one. Plain values.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace chaosbench::bench::train {

struct CheckpointState {
  std::int64_t step = 0;  // optimizer steps completed when it was taken
  std::string model_key;  // e.g. "mlp 256-1024-16 sgd"
  std::vector<std::pair<std::string, std::vector<float>>> buffers;  // "params", "momentum", ...
};

}  // namespace chaosbench::bench::train

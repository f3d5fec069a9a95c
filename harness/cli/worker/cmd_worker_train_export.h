// chaosbench worker train-export: the trainer's initial weights and data as raw float32
// files, for a reference written in another framework (tests/hybrid/torch_reference.py).
#pragma once

#include "harness/cli/commands.h"

namespace chaosbench::harness {

int worker_train_export(const Args& args);

}  // namespace chaosbench::harness

// chaosbench worker train: one rank of the built-in data-parallel trainer.
#pragma once

#include "harness/cli/commands.h"

namespace chaosbench::harness {

int worker_train(const Args& args);

}  // namespace chaosbench::harness

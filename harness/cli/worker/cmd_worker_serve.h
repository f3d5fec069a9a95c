// chaosbench worker serve: the built-in KServe v2 inference server.
#pragma once

#include "harness/cli/commands.h"

namespace chaosbench::harness {

int worker_serve(const Args& args);

}  // namespace chaosbench::harness

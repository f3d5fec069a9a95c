// chaosbench worker load: the load generator for KServe v2 HTTP servers.
#pragma once

#include "harness/cli/commands.h"

namespace chaosbench::harness {

int worker_load(const Args& args);

}  // namespace chaosbench::harness

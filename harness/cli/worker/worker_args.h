// What the worker roles (cmd_worker*.cc) read the same way: integers from the environment
// the runner sets, and their workload's settings (bench/*/*_settings.h) from the command line.
#pragma once

#include <stdexcept>

#include "harness/cli/cli_options.h"

namespace chaosbench::harness {

// The variable as an integer; `fallback` when it is unset or empty.
int env_int(const char* name, int fallback);

// The settings `read` finds in `vm`; its refusal of a flag ("--algorithm: expected ...")
// becomes a UsageError with the same message.
template <class Settings>
Settings read_settings(const po::variables_map& vm, Settings (*read)(const po::variables_map&)) {
  try {
    return read(vm);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

}  // namespace chaosbench::harness

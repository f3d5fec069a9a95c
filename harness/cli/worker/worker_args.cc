#include "harness/cli/worker/worker_args.h"

#include <cstdlib>

namespace chaosbench::harness {

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

}  // namespace chaosbench::harness

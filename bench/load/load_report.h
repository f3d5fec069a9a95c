// The human-readable end-of-run summary of a load run (stdout of `chaosbench worker load`).
#pragma once

#include <string>

#include "bench/load/load_result.h"

namespace chaosbench::bench::load {

std::string format_load_summary(const LoadResult& result);

}  // namespace chaosbench::bench::load

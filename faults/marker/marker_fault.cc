#include "faults/marker/marker_fault.h"

namespace chaosbench::faults {

std::span<const ParamSpec> MarkerFault::params() { return {}; }

}  // namespace chaosbench::faults

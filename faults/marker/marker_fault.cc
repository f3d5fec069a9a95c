#include "faults/marker/marker_fault.h"

namespace chaosbench::faults {

namespace {

constexpr BackendOption kNone[] = {{"none", {}}};
constexpr BackendChoice kBackends{"", kNone};

}  // namespace

std::span<const ParamSpec> MarkerFault::params() { return {}; }
const BackendChoice& MarkerFault::backends() { return kBackends; }

}  // namespace chaosbench::faults

// A fault as it crosses the controller-agent link: its type, its typed parameters
// (exactly: durations in nanoseconds, rates in bit/s, sizes in bytes) and the resolved
// scenario target (nodes, ranks, links, groups); the agent fills in what only its host
// knows (processes, interfaces, control blocks) and applies it through the registry.
// Pure: JSON in, values out.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "faults/param.h"
#include "faults/target.h"

namespace chaosbench::harness {

nlohmann::json encode_params(const faults::Params& params);
// Throws std::invalid_argument on a value that is not one of encode_params' forms.
faults::Params decode_params(const nlohmann::json& j);

// The target's node, rank, link and group lists (never its processes or handles).
nlohmann::json encode_target(const faults::ResolvedTarget& target);
// Throws nlohmann::json::exception on a malformed target.
faults::ResolvedTarget decode_target(const nlohmann::json& j);

}  // namespace chaosbench::harness

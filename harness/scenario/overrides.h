// --set KEY=VALUE: edits the scenario document before validation, as if the file said so.
// KEY is a dotted path ("workload.iters", "faults.0.at" or "faults[0].at"); VALUE is JSON
// when it parses as JSON and a string otherwise ("20ms").
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace chaosbench::harness {

struct AppliedOverride {
  std::string path;    // in diagnostic form: "faults[0].at"
  std::string origin;  // "--set faults.0.at=20ms"
};

// Applies each override in order. Throws ScenarioError (with the --set named) when a key
// is malformed or goes through a value that is not an object or array, or an index is
// out of range.
std::vector<AppliedOverride> apply_overrides(nlohmann::json& doc, const std::vector<std::string>& sets,
                                             const std::string& file);

}  // namespace chaosbench::harness

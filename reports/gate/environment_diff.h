// Whether two runs were measured on comparable machines: what differs between two
// environments' fingerprints (run_model.h Environment) that makes a comparison of their
// numbers meaningless. `compare`, `run --baseline` and `report --baseline` refuse (exit 2)
// when this is not empty, unless --allow-env-diff.
// Compared: the testbed label (both must carry the same one, none counting as one),
// the CPU model, the CPU count, the ISA extensions, the memory (more than 5 % apart) and
// the GPUs. A field either side does not know (a results.json from before the fingerprint)
// is not compared. Not compared: host name, kernel, compiler, commit, scenario (what a
// gate is for is comparing builds and changes on the same machine). Pure.
#pragma once

#include <string>
#include <vector>

#include "reports/model/run_model.h"

namespace chaosbench::reports {

// One line per difference: "CPU model: Intel Xeon ... (baseline) vs AMD EPYC ... (current)".
std::vector<std::string> environment_differences(const Environment& baseline, const Environment& current);

}  // namespace chaosbench::reports

// results.json: the run model written as JSON (schema_version, NaN as null) and read back,
// so `chaosbench report` can regenerate every report from the file alone.
#pragma once

#include <string>

#include "reports/run_model.h"

namespace chaosbench::reports {

std::string to_json(const RunResult& run, int indent = 2);

// Throws std::runtime_error naming what is wrong when the text is not a results file.
RunResult from_json(const std::string& text);

}  // namespace chaosbench::reports

// results.json: the run model written as JSON (schema_version, NaN as null) and read back,
// so `chaosbench report` can regenerate every report from the file alone.
#pragma once

#include <cstddef>
#include <string>

#include "reports/model/run_model.h"

namespace chaosbench::reports {

std::string to_json(const RunResult& run, int indent = 2);

// Throws std::runtime_error naming what is wrong when the text is not a results file.
RunResult from_json(const std::string& text);

// Reads and parses a results file named by a user: a regular file or a pipe (a device is
// refused, never read) of at most kMaxResultsBytes. Throws std::runtime_error saying why, without the
// file's name (the caller adds it) and never quoting its content.
inline constexpr std::size_t kMaxResultsBytes = std::size_t{256} << 20;
RunResult read_results_file(const std::string& path);

}  // namespace chaosbench::reports

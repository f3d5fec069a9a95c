// A results.json named on the command line, read the one way every command that takes one
// does (compare, history, model): the run, or nullopt with the reason on stderr naming the
// command and the file ("chaosbench compare: a.json: not a JSON object"), for an exit 2.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "reports/model/run_model.h"

namespace chaosbench::harness {

std::optional<reports::RunResult> load_results_file(std::string_view command, const std::string& file);

}  // namespace chaosbench::harness

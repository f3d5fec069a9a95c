#include "harness/cli/results_file.h"

#include <fmt/format.h>
#include <iostream>

#include "reports/model/json_io.h"

namespace chaosbench::harness {

std::optional<reports::RunResult> load_results_file(std::string_view command, const std::string& file) {
  try {
    return reports::read_results_file(file);
  } catch (const std::exception& e) {
    std::cerr << fmt::format("chaosbench {}: {}: {}\n", command, file, e.what());
    return std::nullopt;
  }
}

}  // namespace chaosbench::harness

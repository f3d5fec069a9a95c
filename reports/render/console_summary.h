// The end-of-run summary on the terminal: verdict, checks, and a table of key metrics
// from the run model. Formats by unit, so new metrics need no change here.
#pragma once

#include <string>

#include "reports/model/run_model.h"

namespace chaosbench::reports {

// Plain text, no colour codes; ends with a newline.
std::string console_summary(const RunResult& run, const std::string& run_dir);

}  // namespace chaosbench::reports

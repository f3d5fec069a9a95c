// The end-of-run summary on the terminal: verdict, checks, and a table of key metrics
// from the run model. Formats by unit, so new metrics need no change here.
#pragma once

#include <string>

#include "reports/run_model.h"

namespace chaosbench::reports {

// Plain text, no colour codes; ends with a newline.
std::string console_summary(const RunResult& run, const std::string& run_dir);

// "0.681 GB/s", "812 us", "12.5 %": a value with its unit, 3 significant digits.
std::string format_value(double value, const std::string& unit);

}  // namespace chaosbench::reports

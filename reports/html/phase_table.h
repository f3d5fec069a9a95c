// The per-phase metric table of report.html: a row per metric and label set, a column per
// phase (baseline, each fault, each recovery, overall) with the change against the
// baseline phase, and, when the run was compared with a baseline run, the relative change
// with its confidence interval and PASS/WARN/FAIL. Figures of one fault rather than of a
// phase (time to detect and recover, lost steps, retention, fault/*) are left out:
// fault_table.h gives them a table of their own.
#pragma once

#include <string>
#include <string_view>

#include "reports/run_model.h"

namespace chaosbench::reports::html {

// Only metrics whose name starts with `prefix` when it is not empty (then without the
// notes and the baseline-run column: a sub-table, as in the checkpoint section).
std::string phase_table_html(const RunResult& run, std::string_view prefix = "");

}  // namespace chaosbench::reports::html

// The per-phase metric table of report.html: a row per metric and label set (the unit
// after the name), a column per phase with each value's change against the baseline
// phase, and, when the run was compared with a baseline run, under each value the change
// of the compared statistic with PASS/WARN/FAIL (interval and reason in its tooltip).
//
// Layout, so that a run of 10 faults (baseline, 10 fault windows, 10 recoveries, overall:
// 22 phases) reads on a 1280 px page without sideways scrolling:
// - a fault's window and the recovery after it share one column, headed by the fault's
//   name in its chart colour: the window's value ("during") over the recovery's ("after",
//   muted, under a dotted rule). n faults take n columns, not 2n, and the eye reads each
//   fault's impact and whether it recovered in one place; "–" marks a missing half.
// - the table is only as wide as its content, the unit column is folded into the name
//   cell, and comparisons with a baseline run sit in the cell they compare (whole
//   percent; the status only for WARN and FAIL) instead of a column that would list 22
//   comparisons per row.
// - what does not fit (more faults, a phone) scrolls sideways inside its box, never the
//   page, and the metric names stay in view: the first column is sticky.
// Figures of one fault rather than of a phase (time to detect and recover, lost steps,
// retention, fault/*) are left out: fault_table.h gives them a table of their own.
#pragma once

#include <string>
#include <string_view>

#include "reports/model/run_model.h"

namespace chaosbench::reports::html {

// Only metrics whose name starts with `prefix` when it is not empty (then without the
// notes and the baseline-run comparisons: a sub-table, as in the checkpoint section).
std::string phase_table_html(const RunResult& run, std::string_view prefix = "");

}  // namespace chaosbench::reports::html

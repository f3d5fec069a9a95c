// What report.html shows of a combined result of repeated runs (`run --repeat N`,
// RunResult::repeat): the runs it combines, under the verdict (each run's directory as a
// relative link to its own report, its verdict, reason and duration), and, in the sections
// drawn from time series and events (which a combined result leaves to each run), a short
// note that each run's own report has them instead of an empty chart.
#pragma once

#include <string>
#include <string_view>

#include "reports/model/run_model.h"

namespace chaosbench::reports::html {

// repeat_text(*run.repeat) and the table of runs; "" when the run is not a combined one.
std::string repeat_runs_html(const RunResult& run);

// Whether `run` is a combined result whose series and events are left to its runs.
bool combined_without_series(const RunResult& run);

// "A combined result of 5 runs keeps no WHAT: each run's own report has them
// (run-01/report.html … run-05/report.html)." as a <p class="empty">.
std::string per_run_note(const RunResult& run, std::string_view what);

}  // namespace chaosbench::reports::html

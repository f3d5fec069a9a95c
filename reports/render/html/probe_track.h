// The probes' lanes in report.html's timelines: one lane per probe, green while it passed
// and red while it failed (the evidence in each stretch's tooltip), a lane of the fault
// windows above them in the charts' colours, and the abort as a dashed line across all.
// Plain HTML positioned in percent of the run, like the heatmap: no script, and it prints.
#pragma once

#include <string>

#include "reports/model/run_model.h"

namespace chaosbench::reports::html {

// "" when the run has neither probes nor an abort.
std::string probe_track_html(const RunResult& run);

}  // namespace chaosbench::reports::html

// report.html's "Link mesh and diagnosis" section: what the blind diagnosis names from
// the run's measurements (reports/diagnosis/diagnoser.h, with its evidence), and the link mesh as
// one matrix per phase, source by destination, each cell the pair's median round trip
// coloured against the same pair in the first phase (so a slow link is one red pair of
// cells and a slow NIC a red row and column). Plain HTML tables: no script, and they print.
#pragma once

#include <string>

#include "reports/model/run_model.h"

namespace chaosbench::reports::html {

std::string diagnosis_section_html(const RunResult& run);

}  // namespace chaosbench::reports::html

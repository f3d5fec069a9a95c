// `chaosbench model goodput --html FILE`: the goodput model's report as one self-contained
// page (inline CSS and SVG, no script, no external asset): the run's prediction, the table
// per node count, goodput against N for the current and the optimal interval, goodput
// against the checkpoint interval at one N with the Young, Daly and Monte Carlo optima
// marked, the inputs with their provenance and the assumptions.
#pragma once

#include <string>

#include "reports/goodput/goodput_report.h"

namespace chaosbench::reports::html {

std::string goodput_page_html(const GoodputReport& report);

}  // namespace chaosbench::reports::html

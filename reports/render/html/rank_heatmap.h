// The per-rank heatmap of report.html: ranks by time buckets, each cell coloured by the
// rank's median step (or compute) time in that bucket against the run's median cell, so a
// straggler is a red row and a slow link a red column. A plain HTML table: it needs no
// script, and prints.
#pragma once

#include <string>

#include "reports/model/run_model.h"

namespace chaosbench::reports::html {

inline constexpr std::size_t kHeatmapColumns = 48;

std::string rank_heatmap_html(const RunResult& run);

// The cell colour ("#rrggbb") for a cell / reference ratio: blue when faster (0.5x and
// below), white at 1x, orange at 2x, red at 4x and above.
std::string heat_colour(double ratio);

}  // namespace chaosbench::reports::html

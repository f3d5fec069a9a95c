// The "Baseline gate: distributions" section of report.html, present when the run was
// compared with a baseline (run --baseline, compare, a repeated run's gate): for each
// gated row (MetricComparison) the two sides' distributions on one axis
// (distribution_plot.h), with its status, change, confidence interval, p, the n of each
// side and the gate's reason, so a reader sees why it passed or failed, not only that.
//
// Order and room: FAIL rows first, then WARN, then PASS, each in the gate's order. A
// comparison of up to kExpandedRows rows shows every row as a card in a grid (three to a
// row at 1280 px, one on a phone). A larger one (a collective run has about 40 rows, a run
// of many faults hundreds) plots its FAIL and WARN rows (the first kExpandedRows), then,
// while there are fewer than kNearestPassing cards, the passing rows nearest their
// tolerance (the largest change in the worse direction, in tolerances: the close calls an
// A/A comparison is about), and lists the others collapsed, a line per row (status,
// metric, labels, change, p) that opens to the row's plot. The plots are inline SVG
// written here: no script, no network, the same bytes for the same result.
#pragma once

#include <string>
#include <vector>

#include "reports/model/run_model.h"

namespace chaosbench::reports::html {

inline constexpr std::size_t kExpandedRows = 12;
inline constexpr std::size_t kNearestPassing = 6;

// The rows in the section's order: FAIL, WARN, then PASS, the gate's order within each.
std::vector<const MetricComparison*> rows_by_status(const Comparison& comparison);

// The whole <section id="gate">, "" for a run without a comparison.
std::string gate_section_html(const RunResult& run);

// The table of contents' link to it, "" for a run without a comparison.
std::string gate_nav_html(const RunResult& run);

}  // namespace chaosbench::reports::html

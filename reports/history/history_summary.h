// The history gate's trend table in GitHub-flavoured Markdown, for `history gate --summary
// FILE` (appended to $GITHUB_STEP_SUMMARY; docs/report-formats.md): per gated row its
// verdict, a sparkline of the last runs with the current one last, the current value,
// the prediction interval and the change, FAIL and WARN rows first, then the reasons of
// the rows that did not pass. Cells are escaped (text_format.h markdown_cell). Pure.
#pragma once

#include <string>
#include <vector>

#include "reports/history/history_gate.h"
#include "reports/history/history_json.h"

namespace chaosbench::reports {

inline constexpr std::size_t kSummaryRows = 40;        // table rows at most
inline constexpr std::size_t kSparklinePoints = 20;    // history values drawn per row

// One block character per value, ▁ (lowest) to █ (highest) over their range; all equal
// give ▄, a value that is not finite a space.
std::string sparkline(const std::vector<double>& values);

std::string history_summary_markdown(const HistoryGateResult& result, const HistoryPlace& place,
                                     const std::string& current_run);

}  // namespace chaosbench::reports

// What `chaosbench history show` prints per metric of one testbed × scenario: its last
// values, their median and the steps in them (change_point.h over the window alone, no
// current run). docs/history.md. Pure.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "reports/history/history_series.h"

namespace chaosbench::reports {

struct HistoryTrend {
  HistorySeries series;  // the last `window` values
  double median = 0;     // of those values
  bool log_scale = false;
  std::vector<HistoryStep> steps;
  // The strongest single split of the whole window and its p-value, significant or not
  // (the first test of the binary segmentation): how close the history came to a step.
  std::optional<SplitTest> best_split;
};

// The trend of every gated series in the newest `window` comparable entries
// (comparable_window) whose metric name is `metric` (or starts with it when it ends in
// "/"; "" for all).
std::vector<HistoryTrend> history_trends(const std::vector<HistoryEntry>& history, std::size_t window,
                                         const std::string& metric, const ChangePointOptions& options);

}  // namespace chaosbench::reports

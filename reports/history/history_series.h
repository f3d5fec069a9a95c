// A metric's values run by run in a history (history_file.h), and the steps in them: what
// the history gate (history_gate.h) and `history show` both read. A series is keyed by
// metric name, labels (the phase among them) and statistic; docs/history.md explains the
// choices. Pure.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "common/metrics/better.h"
#include "reports/stats/change_point.h"
#include "reports/history/history_entry.h"

namespace chaosbench::reports {

// The statistics a record is gated by, as the baseline gate chooses them: a sampled metric
// (one with stats) by its "p50", and a latency-like one by its "p99" too; a single number
// by its "value".
std::vector<std::string> gated_stats(const MetricRecord& record);
// The statistic's value; nullopt when the record lacks it or it is not finite.
std::optional<double> stat_value(const MetricRecord& record, const std::string& stat);

// The entries a gate or a trend reads: the newest `window` (0: all) of the newest run of
// entries measured on the same machine as the newest one (environment_diff.h finds no
// difference): a change of hardware under one testbed label starts the history anew.
std::vector<const HistoryEntry*> comparable_window(const std::vector<HistoryEntry>& history, std::size_t window);

// What a series (and a gate row) is of: a metric's name, unit and better-direction, its
// labels (the phase among them) and the statistic.
struct HistoryKey {
  std::string name, unit;
  common::Better better = common::Better::kUnknown;
  Labels labels;
  std::string stat;
};

// "train/step_time {phase=overall}": the name and the labels, as the tables show them.
std::string key_text(const HistoryKey& key);

struct HistorySeries {
  HistoryKey key;
  std::vector<double> values;                // oldest first
  std::vector<const HistoryEntry*> entries;  // the run of each value
};

// The series of `record`'s name and labels and `stat` in `window` (entries without it are
// passed over).
HistorySeries series_of(const std::vector<const HistoryEntry*>& window, const MetricRecord& record,
                        const std::string& stat);
// Every gated series in the window, in the order the newest entry lists its records
// (then any the newest lacks, as they first appear).
std::vector<HistorySeries> all_series(const std::vector<const HistoryEntry*>& window);

// A step found in a series: the first run of the new level and the level either side.
struct HistoryStep {
  std::size_t index = 0;  // into the values analysed
  std::size_t begin = 0, end = 0;  // the segment of them the step was found in (change_point.h)
  std::string run_id, git_commit, started_at;  // of that run ("" for the current run)
  double before = 0, after = 0;                 // the levels (segment medians) in the metric's unit
  double size = 0;                              // after / before - 1 (relative_change)
  double statistic = 0, p_value = 1;            // change_point.h
};

// The steps (change_point.h find_change_points) in `values`, on log values when
// `log_scale`; `entries[i]` names the run of values[i].
std::vector<HistoryStep> steps_in(const std::vector<double>& values, const std::vector<const HistoryEntry*>& entries,
                                  bool log_scale, const ChangePointOptions& options);

}  // namespace chaosbench::reports

// The history gate: this run against the last runs of the same testbed × scenario, per
// metric (`chaosbench history gate`, docs/history.md). For each gated statistic of the
// current run (gate_selection.h, history_series.h) the same metric, labels and statistic
// in the newest `window` comparable entries (history_series.h comparable_window) give:
// - a Student's t prediction interval at 1 - alpha (prediction_interval.h), on log values
//   when every value is above zero; after a significant step with at least min_history
//   runs since it, over those runs only (the level before the step is no longer the
//   level to predict);
// - a change-point pass over the window's values (change_point.h); the current value is
//   left out, so that it cannot make the newest history run look like the first of a step.
// Verdict per row:
// - FAIL: the current value lies outside the interval on the worse side AND its change
//   against the interval's centre is beyond the tolerance;
// - WARN: fewer than min_history history values (never a silent pass), or a significant
//   step in the worse direction beyond the tolerance that still holds (the latest level
//   against the level before it), naming the step's first run;
// - PASS: otherwise; improvements never fail.
// The environment check (refusing a history from other hardware) is the caller's. Pure
// and deterministic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "reports/model/gate_status.h"
#include "reports/history/history_entry.h"
#include "reports/history/history_series.h"
#include "reports/stats/prediction_interval.h"
#include "reports/model/run_model.h"

namespace chaosbench::reports {

struct HistoryGateOptions {
  std::size_t window = 30;        // history runs considered (the newest comparable ones)
  double alpha = 0.01;            // the interval is at 1 - alpha; the steps' significance level
  double default_tolerance = 0.05;
  std::size_t min_history = 5;    // fewer history values: WARN
  std::size_t permutations = 1999;
  std::uint64_t seed = 1;
};

struct HistoryRow {
  HistoryKey key;
  std::vector<double> values;         // the window's values, oldest first
  std::vector<std::string> run_ids;   // of each value
  double current = 0;
  std::size_t interval_from = 0;      // values[interval_from..] made the interval
  std::optional<PredictionInterval> interval;
  double change = 0;                  // current against the interval's centre (relative_change); NaN without one
  double tolerance = 0.05;
  std::vector<HistoryStep> steps;     // found in values
  std::optional<std::size_t> warned_step;  // the step a WARN names (an index into steps)
  GateStatus status = GateStatus::kWarn;
  std::string reason;
};

struct HistoryGateResult {
  std::size_t history_runs = 0;  // entries in the window
  std::string newest_run;        // the newest history entry's run_id ("" when none)
  double alpha = 0.01;
  std::vector<HistoryRow> rows;
  GateStatus verdict = GateStatus::kPass;  // the worst row
};

HistoryGateResult gate_against_history(const std::vector<HistoryEntry>& history, const RunResult& current,
                                       const HistoryGateOptions& options = {});

}  // namespace chaosbench::reports

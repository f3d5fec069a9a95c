#include "reports/history/history_gate.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>

#include "reports/gate/gate_selection.h"
#include "reports/stats/statistics.h"
#include "reports/model/text_format.h"

namespace chaosbench::reports {
namespace {

std::string pct_text(double x) {
  if (std::isinf(x)) return x > 0 ? "+inf%" : "-inf%";
  return format_change(x);
}

// "run R (commit abc1234, 2024-05-01T10:00:00Z)"
std::string step_run_text(const HistoryStep& s) {
  if (s.run_id.empty()) return "the current run";
  std::string extra = s.git_commit.empty() ? "" : "commit " + s.git_commit.substr(0, 12);
  if (!s.started_at.empty()) extra += (extra.empty() ? "" : ", ") + s.started_at;
  return extra.empty() ? "run " + s.run_id : fmt::format("run {} ({})", s.run_id, extra);
}

std::string step_name(const HistoryStep& s) { return s.run_id.empty() ? "the current run" : "run " + s.run_id; }

// The latest step in the worse direction whose level still holds beyond the tolerance:
// the latest level against the level before that step.
std::optional<std::size_t> worse_step(const HistoryRow& row) {
  if (row.steps.empty()) return std::nullopt;
  const double sign = common::worse_sign(row.key.better);
  const double now = row.steps.back().after;
  for (std::size_t j = row.steps.size(); j-- > 0;) {
    const auto& s = row.steps[j];
    if (sign * s.size > 0 && sign * relative_change(s.before, now) > row.tolerance) return j;
  }
  return std::nullopt;
}

// Picks the runs the interval is made of: those since the latest step when there are
// min_history of them, else the whole window. Returns a note for the reason ("" for none).
std::string choose_interval_runs(HistoryRow& row, const HistoryGateOptions& options) {
  if (row.steps.empty()) return "";
  const HistoryStep& last = row.steps.back();
  const std::size_t since = row.values.size() - std::min(last.index, row.values.size());
  if (since >= options.min_history) {
    row.interval_from = last.index;
    return fmt::format("; the interval is of the {} runs since the step at {}", since, step_name(last));
  }
  return fmt::format("; a step at {} ({} runs since: the interval keeps the whole window until {} follow it)",
                     step_name(last), since, options.min_history);
}

void judge(HistoryRow& row, const std::string& interval_note, const HistoryGateOptions& options) {
  const double sign = common::worse_sign(row.key.better);
  const std::size_t n = row.values.size();
  std::string numbers = fmt::format("{} against the mean of {} runs", pct_text(row.change),
                                    row.interval ? row.interval->n : n);
  if (row.interval)
    numbers += fmt::format(" ({}), {:g}% prediction interval {}..{}", format_value(row.interval->center, row.key.unit),
                           (1 - options.alpha) * 100, format_value(row.interval->low, ""),
                           format_value(row.interval->high, row.key.unit));
  numbers += fmt::format(", tolerance {:g}%{}", row.tolerance * 100, interval_note);
  row.warned_step = worse_step(row);
  std::string step_note;
  if (row.warned_step) {
    const auto& s = row.steps[*row.warned_step];
    step_note = fmt::format("a step at {}: {} ({} → {}), p={:.2g}", step_run_text(s), pct_text(s.size),
                            format_value(s.before, row.key.unit), format_value(s.after, row.key.unit), s.p_value);
  }
  if (n == 0) {
    row.status = GateStatus::kWarn;
    row.reason = "no history for this metric";
    return;
  }
  if (n < options.min_history || !row.interval) {
    row.status = GateStatus::kWarn;
    row.reason = fmt::format("too few history runs: {}, need {}: {}", n, options.min_history, numbers);
    return;
  }
  const bool outside = sign > 0 ? row.current > row.interval->high : row.current < row.interval->low;
  const bool beyond = sign * row.change > row.tolerance;
  if (outside && beyond) {
    row.status = GateStatus::kFail;
    row.reason = "regression: " + numbers + (step_note.empty() ? "" : "; " + step_note);
  } else if (row.warned_step) {
    row.status = GateStatus::kWarn;
    row.reason = step_note + " (still " + pct_text(relative_change(row.steps[*row.warned_step].before,
                                                                   row.steps.back().after)) +
                 "); " + numbers;
  } else {
    row.status = GateStatus::kPass;
    const bool better_side = sign > 0 ? row.current < row.interval->low : row.current > row.interval->high;
    if (better_side) row.reason = "improvement: " + numbers;
    else if (!outside) row.reason = "within the prediction interval: " + numbers;
    else row.reason = "outside the interval but within tolerance: " + numbers;
  }
}

HistoryRow gate_row(const std::vector<const HistoryEntry*>& window, const MetricRecord& record,
                    const std::string& stat, double current, double tolerance, const HistoryGateOptions& options) {
  const HistorySeries series = series_of(window, record, stat);
  HistoryRow row;
  row.key = series.key;
  row.values = series.values;
  row.current = current;
  row.tolerance = tolerance;
  for (const HistoryEntry* e : series.entries) row.run_ids.push_back(e->run_id);
  const bool log_scale = log_scale_fits(row.values, current);
  ChangePointOptions cp;
  cp.alpha = options.alpha;
  cp.permutations = options.permutations;
  cp.seed = options.seed;
  // The history alone: a current run far off would otherwise pair with the newest
  // history run into a two-run "step" that blames that run's commit. The interval judges
  // the current run; a step is named once history runs show it.
  row.steps = steps_in(row.values, series.entries, log_scale, cp);
  const std::string note = choose_interval_runs(row, options);
  const std::vector<double> used(row.values.begin() + static_cast<std::ptrdiff_t>(row.interval_from), row.values.end());
  row.interval = prediction_interval(used, 1.0 - options.alpha, log_scale);
  if (row.interval) row.change = relative_change(row.interval->center, current);
  else row.change = row.values.empty() ? std::numeric_limits<double>::quiet_NaN()
                                       : relative_change(row.values.back(), current);
  judge(row, note, options);
  return row;
}

}  // namespace

HistoryGateResult gate_against_history(const std::vector<HistoryEntry>& history, const RunResult& current,
                                       const HistoryGateOptions& options) {
  HistoryGateResult out;
  out.alpha = options.alpha;
  const auto window = comparable_window(history, options.window);
  out.history_runs = window.size();
  if (!history.empty()) out.newest_run = history.back().run_id;
  const auto& rules = current.scenario_facts.tolerances;
  for (const auto& record : current.metrics) {
    if (!gated(record)) continue;
    const double tolerance = tolerance_for(record, rules, options.default_tolerance);
    for (const auto& stat : gated_stats(record)) {
      const auto value = stat_value(record, stat);
      if (!value) continue;  // nothing measured to judge (a NaN record)
      out.rows.push_back(gate_row(window, record, stat, *value, tolerance, options));
    }
  }
  for (const auto& r : out.rows) out.verdict = std::max(out.verdict, r.status);
  return out;
}

}  // namespace chaosbench::reports

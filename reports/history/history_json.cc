#include "reports/history/history_json.h"

#include <cmath>

#include "common/json/json_values.h"

namespace chaosbench::reports {
namespace {

using json = nlohmann::ordered_json;
using common::json_finite;
using common::labels_to_json;

json numbers(const std::vector<double>& values) {
  json out = json::array();
  for (double v : values) out.push_back(json_finite(v));
  return out;
}

json key_json(const HistoryKey& key) {
  return {{"name", key.name}, {"unit", key.unit}, {"better", common::to_string(key.better)}, {"labels", labels_to_json(key.labels)},
          {"stat", key.stat}};
}

json steps_json(const std::vector<HistoryStep>& steps) {
  json out = json::array();
  for (const auto& s : steps)
    out.push_back({{"index", s.index}, {"segment", {s.begin, s.end}}, {"run_id", s.run_id},
                   {"git_commit", s.git_commit},
                   {"started_at", s.started_at}, {"before", json_finite(s.before)}, {"after", json_finite(s.after)},
                   {"size", json_finite(s.size)}, {"statistic", json_finite(s.statistic)}, {"p_value", json_finite(s.p_value)}});
  return out;
}

json split_json(const std::optional<SplitTest>& t) {
  if (!t) return nullptr;
  return {{"index", t->split.index}, {"statistic", json_finite(t->split.statistic)}, {"p_value", json_finite(t->p_value)},
          {"permutations", t->permutations}};
}

json interval_json(const std::optional<PredictionInterval>& pi) {
  if (!pi) return nullptr;
  return {{"n", pi->n},          {"scale", pi->log_scale ? "log" : "linear"}, {"mean", json_finite(pi->mean)},
          {"sd", json_finite(pi->sd)}, {"t_quantile", json_finite(pi->t_quantile)},    {"center", json_finite(pi->center)},
          {"low", json_finite(pi->low)}, {"high", json_finite(pi->high)}};
}

json place_json(const HistoryPlace& place) {
  return {{"testbed", place.testbed}, {"scenario", place.scenario}, {"path", place.path}};
}

json row_json(const HistoryRow& r) {
  json out = key_json(r.key);
  out["values"] = numbers(r.values);
  out["run_ids"] = r.run_ids;
  out["current"] = json_finite(r.current);
  out["interval_from"] = r.interval_from;
  out["interval"] = interval_json(r.interval);
  out["change"] = json_finite(r.change);
  out["tolerance"] = json_finite(r.tolerance);
  out["steps"] = steps_json(r.steps);
  out["warned_step"] = r.warned_step ? json(*r.warned_step) : json(nullptr);
  out["status"] = to_string(r.status);
  out["reason"] = r.reason;
  return out;
}

}  // namespace

json history_gate_json(const HistoryGateResult& result, const HistoryPlace& place, const std::string& current_run) {
  json rows = json::array();
  for (const auto& r : result.rows) rows.push_back(row_json(r));
  json out = place_json(place);
  out["current_run"] = current_run;
  out["history_runs"] = result.history_runs;
  out["newest_run"] = result.newest_run;
  out["alpha"] = json_finite(result.alpha);
  out["verdict"] = to_string(result.verdict);
  out["metrics"] = std::move(rows);
  return out;
}

json history_trends_json(const HistoryPlace& place, const std::vector<HistoryEntry>& history,
                         const std::vector<HistoryTrend>& trends) {
  json out = place_json(place);
  out["runs"] = history.size();
  if (!history.empty()) {
    const auto& n = history.back();
    out["newest"] = {{"run_id", n.run_id}, {"started_at", n.started_at}, {"git_commit", n.environment.git_commit}};
  }
  json metrics = json::array();
  for (const auto& t : trends) {
    const auto& s = t.series;
    json runs = json::array();
    for (const HistoryEntry* e : s.entries) runs.push_back(e->run_id);
    json m = key_json(s.key);
    m["values"] = numbers(s.values);
    m["run_ids"] = runs;
    m["median"] = json_finite(t.median);
    m["scale"] = t.log_scale ? "log" : "linear";
    m["steps"] = steps_json(t.steps);
    m["best_split"] = split_json(t.best_split);
    metrics.push_back(std::move(m));
  }
  out["metrics"] = std::move(metrics);
  return out;
}

}  // namespace chaosbench::reports

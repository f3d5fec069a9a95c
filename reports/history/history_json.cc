#include "reports/history_json.h"

#include <cmath>

namespace chaosbench::reports {
namespace {

using json = nlohmann::ordered_json;

json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json numbers(const std::vector<double>& values) {
  json out = json::array();
  for (double v : values) out.push_back(number(v));
  return out;
}

// nlohmann writes a value that is not finite as null.
json labels_json(const Labels& labels) {
  json out = json::object();
  for (const auto& [k, v] : labels) out[k] = std::visit([](const auto& x) { return json(x); }, v);
  return out;
}

json key_json(const HistoryKey& key) {
  return {{"name", key.name}, {"unit", key.unit}, {"better", key.better}, {"labels", labels_json(key.labels)},
          {"stat", key.stat}};
}

json steps_json(const std::vector<HistoryStep>& steps) {
  json out = json::array();
  for (const auto& s : steps)
    out.push_back({{"index", s.index}, {"segment", {s.begin, s.end}}, {"run_id", s.run_id},
                   {"git_commit", s.git_commit},
                   {"started_at", s.started_at}, {"before", number(s.before)}, {"after", number(s.after)},
                   {"size", number(s.size)}, {"statistic", number(s.statistic)}, {"p_value", number(s.p_value)}});
  return out;
}

json split_json(const std::optional<SplitTest>& t) {
  if (!t) return nullptr;
  return {{"index", t->split.index}, {"statistic", number(t->split.statistic)}, {"p_value", number(t->p_value)},
          {"permutations", t->permutations}};
}

json interval_json(const std::optional<PredictionInterval>& pi) {
  if (!pi) return nullptr;
  return {{"n", pi->n},          {"scale", pi->log_scale ? "log" : "linear"}, {"mean", number(pi->mean)},
          {"sd", number(pi->sd)}, {"t_quantile", number(pi->t_quantile)},    {"center", number(pi->center)},
          {"low", number(pi->low)}, {"high", number(pi->high)}};
}

json place_json(const HistoryPlace& place) {
  return {{"testbed", place.testbed}, {"scenario", place.scenario}, {"path", place.path}};
}

json row_json(const HistoryRow& r) {
  json out = key_json(r.key);
  out["values"] = numbers(r.values);
  out["run_ids"] = r.run_ids;
  out["current"] = number(r.current);
  out["interval_from"] = r.interval_from;
  out["interval"] = interval_json(r.interval);
  out["change"] = number(r.change);
  out["tolerance"] = number(r.tolerance);
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
  out["alpha"] = number(result.alpha);
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
    m["median"] = number(t.median);
    m["scale"] = t.log_scale ? "log" : "linear";
    m["steps"] = steps_json(t.steps);
    m["best_split"] = split_json(t.best_split);
    metrics.push_back(std::move(m));
  }
  out["metrics"] = std::move(metrics);
  return out;
}

}  // namespace chaosbench::reports

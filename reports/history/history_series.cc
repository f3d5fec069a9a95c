#include "reports/history/history_series.h"

#include <cmath>

#include "reports/gate/environment_diff.h"
#include "reports/gate/gate_selection.h"
#include "reports/stats/statistics.h"
#include "reports/model/text_format.h"

namespace chaosbench::reports {
namespace {

const MetricRecord* find_record(const HistoryEntry& entry, const std::string& name, const Labels& labels) {
  for (const auto& r : entry.records)
    if (r.name == name && r.labels == labels) return &r;
  return nullptr;
}

}  // namespace

std::string key_text(const HistoryKey& key) {
  const std::string labels = format_labels(key.labels);
  return labels.empty() ? key.name : key.name + " " + labels;
}

std::vector<std::string> gated_stats(const MetricRecord& record) {
  if (!record.stats) return {"value"};
  if (latency_like(record)) return {"p50", "p99"};
  return {"p50"};
}

std::optional<double> stat_value(const MetricRecord& record, const std::string& stat) {
  std::optional<double> v;
  if (stat == "value") v = record.value;
  else if (record.stats && stat == "p50") v = record.stats->p50;
  else if (record.stats && stat == "p99") v = record.stats->p99;
  if (v && !std::isfinite(*v)) v.reset();
  return v;
}

std::vector<const HistoryEntry*> comparable_window(const std::vector<HistoryEntry>& history, std::size_t window) {
  std::size_t from = history.size();
  while (from > 0 && environment_differences(history[from - 1].environment, history.back().environment).empty())
    --from;
  if (window > 0 && history.size() - from > window) from = history.size() - window;
  std::vector<const HistoryEntry*> out;
  for (std::size_t i = from; i < history.size(); ++i) out.push_back(&history[i]);
  return out;
}

HistorySeries series_of(const std::vector<const HistoryEntry*>& window, const MetricRecord& record,
                        const std::string& stat) {
  HistorySeries s{{record.name, record.unit, record.better, record.labels, stat}, {}, {}};
  for (const HistoryEntry* e : window) {
    const MetricRecord* r = find_record(*e, record.name, record.labels);
    if (!r) continue;
    if (auto v = stat_value(*r, stat)) {
      s.values.push_back(*v);
      s.entries.push_back(e);
    }
  }
  return s;
}

std::vector<HistorySeries> all_series(const std::vector<const HistoryEntry*>& window) {
  std::vector<const MetricRecord*> keys;
  auto add_keys = [&](const HistoryEntry& e) {
    for (const auto& r : e.records) {
      bool known = false;
      for (const MetricRecord* k : keys) known = known || (k->name == r.name && k->labels == r.labels);
      if (!known) keys.push_back(&r);
    }
  };
  if (!window.empty()) add_keys(*window.back());
  for (const HistoryEntry* e : window) add_keys(*e);
  std::vector<HistorySeries> out;
  for (const MetricRecord* k : keys)
    for (const auto& stat : gated_stats(*k)) {
      auto s = series_of(window, *k, stat);
      if (!s.values.empty()) out.push_back(std::move(s));
    }
  return out;
}

std::vector<HistoryStep> steps_in(const std::vector<double>& values, const std::vector<const HistoryEntry*>& entries,
                                  bool log_scale, const ChangePointOptions& options) {
  std::vector<double> x = values;
  if (log_scale)
    for (double& v : x) v = std::log(v);
  std::vector<HistoryStep> out;
  for (const auto& cp : find_change_points(x, options)) {
    HistoryStep step;
    step.index = cp.index;
    step.begin = cp.begin;
    step.end = cp.end;
    if (cp.index < entries.size()) {
      step.run_id = entries[cp.index]->run_id;
      step.git_commit = entries[cp.index]->environment.git_commit;
      step.started_at = entries[cp.index]->started_at;
    }
    step.before = log_scale ? std::exp(cp.before) : cp.before;
    step.after = log_scale ? std::exp(cp.after) : cp.after;
    step.size = relative_change(step.before, step.after);
    step.statistic = cp.statistic;
    step.p_value = cp.p_value;
    out.push_back(std::move(step));
  }
  return out;
}

}  // namespace chaosbench::reports

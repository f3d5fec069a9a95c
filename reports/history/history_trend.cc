#include "reports/history/history_trend.h"

#include <cmath>

#include "common/values/percentile.h"
#include "reports/stats/prediction_interval.h"

namespace chaosbench::reports {
namespace {

bool wanted(const std::string& name, const std::string& metric) {
  if (metric.empty()) return true;
  if (metric.back() == '/') return name.rfind(metric, 0) == 0;
  return name == metric;
}

}  // namespace

std::vector<HistoryTrend> history_trends(const std::vector<HistoryEntry>& history, std::size_t window,
                                         const std::string& metric, const ChangePointOptions& options) {
  std::vector<HistoryTrend> out;
  for (auto& series : all_series(comparable_window(history, window))) {
    if (!wanted(series.key.name, metric)) continue;
    HistoryTrend t;
    t.median = common::median(series.values);
    // The log scale needs every value above zero; the newest one stands in for a current.
    t.log_scale = log_scale_fits(series.values, series.values.back());
    t.steps = steps_in(series.values, series.entries, t.log_scale, options);
    std::vector<double> x = series.values;
    if (t.log_scale)
      for (double& v : x) v = std::log(v);
    t.best_split = test_split(x, options);
    t.series = std::move(series);
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace chaosbench::reports

#include "reports/gate/gate_rows.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "common/values/percentile.h"

namespace chaosbench::reports::gate_detail {

MetricComparison row_for(const MetricRecord& r, const std::string& stat, double tolerance) {
  MetricComparison m;
  m.name = r.name;
  m.unit = r.unit;
  m.better = r.better;
  m.labels = r.labels;
  m.stat = stat;
  m.tolerance = tolerance;
  return m;
}

std::string signed_pct(double x) {
  if (std::isinf(x)) return x > 0 ? "+inf%" : "-inf%";
  return fmt::format("{:+.1f}%", x * 100.0);
}

std::string p_text(double p) { return p >= 0.001 ? fmt::format("{:.3g}", p) : fmt::format("{:.1e}", p); }

std::vector<double> plot_quantiles(const std::vector<double>& values) {
  std::vector<double> out;
  if (values.empty()) return out;
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  for (int q = 0; q <= 100; q += 5) out.push_back(common::percentile_sorted(sorted, q));
  return out;
}

}  // namespace chaosbench::reports::gate_detail

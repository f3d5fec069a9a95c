#include "reports/render/bmf_report.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace chaosbench::reports {
namespace {

// Bencher's limits on a benchmark's and a measure's name.
constexpr std::size_t kMaxBenchmark = 1024, kMaxMeasure = 64;

std::string benchmark_name(const RunResult& run, const MetricRecord& r) {
  std::string name = fmt::format("{}/{}", run.scenario_name.empty() ? "run" : run.scenario_name,
                                 r.labels.contains("phase") ? label_to_string(r.labels.at("phase")) : "overall");
  std::string rest;
  for (const auto& [key, value] : r.labels) {  // a std::map: sorted by key
    if (key == "phase") continue;
    rest += fmt::format("{}{}={}", rest.empty() ? "" : ", ", key, label_to_string(value));
  }
  if (!rest.empty()) name += " [" + rest + "]";
  return name;
}

// The smallest and largest of the runs' values of a combined result's record (at least
// two), when the median lies between them.
std::optional<std::pair<double, double>> run_spread(const MetricRecord& r) {
  if (!r.runs) return std::nullopt;
  std::vector<double> v;
  for (double x : r.runs->value)
    if (std::isfinite(x)) v.push_back(x);
  if (v.size() < 2) return std::nullopt;
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  if (!(*lo <= r.value && r.value <= *hi)) return std::nullopt;
  return std::pair{*lo, *hi};
}

}  // namespace

std::string render_bmf(const RunResult& run) {
  nlohmann::json out = nlohmann::json::object();
  for (const MetricRecord& r : run.metrics) {
    if (!std::isfinite(r.value) || r.name.empty() || r.name.size() > kMaxMeasure) continue;
    const std::string benchmark = benchmark_name(run, r);
    if (benchmark.size() > kMaxBenchmark) continue;
    nlohmann::json metric{{"value", r.value}};
    if (auto spread = run_spread(r)) {  // a combined result: the runs' own spread
      metric["lower_value"] = spread->first;
      metric["upper_value"] = spread->second;
    } else if (r.stats && r.stats->n >= 2 && std::isfinite(r.stats->min) && std::isfinite(r.stats->max) &&
        r.stats->min <= r.value && r.value <= r.stats->max) {
      metric["lower_value"] = r.stats->min;
      metric["upper_value"] = r.stats->max;
    }
    out[benchmark][r.name] = std::move(metric);
  }
  return out.dump(2) + "\n";
}

}  // namespace chaosbench::reports

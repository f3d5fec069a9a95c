#include "reports/render/html/chart_data.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>

#include "common/metrics/metric_catalogue.h"
#include "common/values/percentile.h"
#include "reports/render/html/downsample.h"
#include "reports/render/html/html_text.h"

namespace chaosbench::reports::html {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxTimelines = 8;
constexpr std::size_t kMaxGroups = 40;        // label sets one chart offers in its selector
constexpr std::size_t kMaxLinesPerGroup = 8;  // more ranks than this are pooled
constexpr std::size_t kMaxPercentileCharts = 6;

// 4 significant digits is finer than a chart can show and keeps the numbers short.
double round_sig(double x) {
  if (!std::isfinite(x) || x == 0) return x;
  return std::strtod(fmt::format("{:.4g}", x).c_str(), nullptr);
}
double round_time(double t) { return std::round(t * 1e4) / 1e4; }

json line_json(const std::string& label, const Line& line) {
  json t = json::array(), v = json::array();
  for (double x : line.t) t.push_back(round_time(x));
  for (double x : line.v) v.push_back(std::isfinite(x) ? json(round_sig(x)) : json(nullptr));
  return {{"label", label}, {"t", std::move(t)}, {"v", std::move(v)}};
}

bool is_constant(const Series& s) {
  return std::adjacent_find(s.v.begin(), s.v.end(), std::not_equal_to<>()) == s.v.end();
}

// Log scale when the bulk of the values (5th to 95th percentile) spans more than two
// decades and all are positive: a lone outlier near zero must not flatten the chart.
bool wants_log(std::vector<double> values) {
  if (values.size() < 2 || *std::min_element(values.begin(), values.end()) <= 0) return false;
  std::sort(values.begin(), values.end());
  return common::percentile_sorted(values, 95) / common::percentile_sorted(values, 5) > 100;
}

struct Group {
  Labels key;  // labels but "rank"
  std::vector<const Series*> series;
};

std::vector<Group> groups_of(const RunResult& run, const std::string& name) {
  std::map<Labels, std::vector<const Series*>> by_key;
  for (const auto& s : run.series) {
    if (s.name != name || s.t.empty()) continue;
    Labels key = s.labels;
    key.erase("rank");
    by_key[key].push_back(&s);
  }
  std::vector<Group> out;
  for (auto& [key, series] : by_key) {
    if (out.size() == kMaxGroups) break;
    out.push_back({key, std::move(series)});
  }
  return out;
}

std::string line_label(const Series& s) {
  std::string rank = label(s.labels, "rank");
  return rank.empty() ? labels_text(s.labels, "") : "rank " + rank;
}

json timelines_json(const RunResult& run) {
  auto names = timeline_metrics(run);
  std::vector<std::vector<Group>> all;
  std::size_t lines = 0;
  for (const auto& name : names) {
    all.push_back(groups_of(run, name));
    for (const auto& g : all.back()) lines += g.series.size() > kMaxLinesPerGroup ? 2 : g.series.size();
  }
  std::size_t per_line = std::clamp<std::size_t>(kTimelinePointBudget / std::max<std::size_t>(lines, 1), 50, kMaxLinePoints);
  json out = json::array();
  for (std::size_t m = 0; m < names.size(); ++m) {
    json groups = json::array();
    std::vector<double> shown;  // every value drawn, for the scale
    std::string unit;
    for (const auto& g : all[m]) {
      json glines = json::array();
      double t0 = INFINITY, t1 = -INFINITY;
      for (const auto* s : g.series) {
        unit = s->unit;
        for (double x : s->t) {
          t0 = std::min(t0, x);
          t1 = std::max(t1, x);
        }
      }
      if (g.series.size() <= kMaxLinesPerGroup) {
        for (const auto* s : g.series) glines.push_back(line_json(line_label(*s), downsample_extremes(s->t, s->v, per_line)));
      } else {
        std::vector<const std::vector<double>*> ts, vs;
        for (const auto* s : g.series) {
          ts.push_back(&s->t);
          vs.push_back(&s->v);
        }
        auto pooled = pool_median_max(ts, vs, t0, t1, per_line);
        glines.push_back(line_json(fmt::format("median of {} series", g.series.size()), pooled.median));
        glines.push_back(line_json(fmt::format("max of {} series", g.series.size()), pooled.max));
      }
      for (const auto& l : glines)
        for (const auto& x : l["v"])
          if (x.is_number()) shown.push_back(x.get<double>());
      std::string text = labels_text(g.key, "");
      groups.push_back({{"label", text.empty() ? "all" : text}, {"lines", std::move(glines)}});
    }
    out.push_back({{"metric", names[m]}, {"title", names[m]}, {"unit", unit}, {"log", wants_log(shown)},
                   {"groups", std::move(groups)}});
  }
  return out;
}

bool is_time_unit(const std::string& unit) { return unit == "ns" || unit == "us" || unit == "ms" || unit == "s"; }

bool latency_metric(const MetricRecord& m) {
  if (!m.stats || !is_time_unit(m.unit)) return false;
  if (const auto* spec = common::find_metric(m.name)) return spec->display.latency_like;
  return name_looks_latency_like(m.name);
}

json percentiles_json(const RunResult& run) {
  const auto phases = phase_columns(run);
  std::vector<std::string> names;
  std::map<std::string, std::vector<const MetricRecord*>> by_name;
  for (const auto& m : run.metrics) {
    if (!latency_metric(m)) continue;
    if (!by_name.contains(m.name)) names.push_back(m.name);
    by_name[m.name].push_back(&m);
  }
  json out = json::array();
  for (const auto& name : names) {
    const auto& records = by_name[name];
    std::uint64_t most = 0;
    for (const auto* m : records) most = std::max(most, m->stats->n);
    if (most < 5) continue;  // a percentile of a handful of samples says nothing
    std::map<Labels, std::map<std::string, const MetricRecord*>> by_key;
    for (const auto* m : records) {
      Labels key = m->labels;
      key.erase("phase");
      by_key[key][label(m->labels, "phase")] = m;
    }
    json groups = json::array();
    std::vector<double> shown;
    for (const auto& [key, per_phase] : by_key) {
      if (groups.size() == kMaxGroups) break;
      json ph = json::array(), p50 = json::array(), p90 = json::array(), p99 = json::array();
      for (const auto& p : phases) {
        auto it = per_phase.find(p);
        if (it == per_phase.end()) continue;
        const Stats& s = *it->second->stats;
        ph.push_back(p);
        p50.push_back(round_sig(s.p50));
        p90.push_back(round_sig(s.p90));
        p99.push_back(round_sig(s.p99));
        shown.push_back(s.p50);
        shown.push_back(s.p99);
      }
      std::string text = labels_text(key, "");
      groups.push_back({{"label", text.empty() ? "all" : text}, {"phases", std::move(ph)}, {"p50", std::move(p50)},
                        {"p90", std::move(p90)}, {"p99", std::move(p99)}});
    }
    out.push_back({{"metric", name}, {"title", name}, {"unit", records.front()->unit}, {"log", wants_log(shown)},
                   {"groups", std::move(groups)}});
    if (out.size() == kMaxPercentileCharts) break;
  }
  return out;
}

json breakdown_json(const RunResult& run) {
  std::optional<double> goodput;
  json buckets = json::array();
  for (const auto& m : run.metrics) {
    if (label(m.labels, "phase") != "overall") continue;
    if (m.name == "resilience/goodput" && !goodput) goodput = m.value;
    if (m.name == "resilience/badput" && std::isfinite(m.value))
      buckets.push_back({{"name", label(m.labels, "bucket")}, {"value", round_sig(m.value)}});
  }
  if (!goodput && buckets.empty()) return nullptr;
  return {{"goodput", goodput ? round_sig(*goodput) : 0.0}, {"buckets", std::move(buckets)}};
}

}  // namespace

bool name_looks_latency_like(std::string_view name) {
  if (name.starts_with("resilience/") || name.starts_with("ckpt/") || name.starts_with("fault/")) return false;
  return name.find("latency") != std::string_view::npos || name.ends_with("_time") || name.ends_with("/ttft") ||
         name.ends_with("/tpot") || name.ends_with("/itl");
}

std::vector<std::string> timeline_metrics(const RunResult& run) {
  std::map<std::string, std::pair<std::size_t, bool>> info;  // longest series, any non-constant
  std::vector<std::string> seen;
  for (const auto& s : run.series) {
    auto [it, fresh] = info.try_emplace(s.name, 0, false);
    if (fresh) seen.push_back(s.name);
    it->second.first = std::max(it->second.first, s.t.size());
    it->second.second = it->second.second || !is_constant(s);
  }
  std::vector<std::string> out;
  // Timelines people look for first (the catalogue's timeline ranks); other series follow
  // when they have something to show.
  for (const auto* key : common::metrics_ranked_by(&common::MetricDisplay::timeline_rank)) {
    auto it = info.find(std::string(key->name));
    if (it != info.end() && it->second.first >= 3) out.push_back(std::string(key->name));
  }
  for (const auto& name : seen) {
    const auto& [longest, varies] = info[name];
    if (longest >= 10 && varies && std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  }
  if (out.size() > kMaxTimelines) out.resize(kMaxTimelines);
  return out;
}

double timeline_duration(const RunResult& run) {
  double duration = run.duration_s;
  for (const auto& s : run.series)
    for (double t : s.t) duration = std::max(duration, t);
  return duration;
}

std::string chart_data_json(const RunResult& run) {
  const double duration = timeline_duration(run);
  json faults = json::array();
  for (const auto& f : run.faults) {
    if (!f.applied_at_s) continue;
    std::string name = f.occurrence > 1 ? fmt::format("{}#{}", f.name, f.occurrence) : f.name;
    faults.push_back({{"label", fmt::format("{} ({})", name, f.type)},
                      {"start", round_time(*f.applied_at_s)},
                      {"end", f.reverted_at_s ? json(round_time(*f.reverted_at_s)) : json(nullptr)}});
  }
  // The abort: a dashed line across every chart where the stop condition was decided.
  json abort = run.abort ? json{{"t", round_time(run.abort->decided_s)}, {"label", "abort: " + run.abort->cause}} : json(nullptr);
  json data = {{"duration", round_time(duration)},
               {"faults", std::move(faults)},
               {"abort", std::move(abort)},
               {"timelines", timelines_json(run)},
               {"percentiles", percentiles_json(run)},
               {"breakdown", breakdown_json(run)}};
  std::string text = data.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size() + 64);
  for (char c : text) {
    if (c == '<') out += "\\u003c";
    else out += c;
  }
  return out;
}

}  // namespace chaosbench::reports::html

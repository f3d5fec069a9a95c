#include "reports/render/html/rank_heatmap.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>

#include "common/values/percentile.h"
#include "reports/render/html/downsample.h"
#include "reports/render/html/html_text.h"

namespace chaosbench::reports::html {
namespace {

struct Rgb {
  double r, g, b;
};

Rgb mix(Rgb a, Rgb b, double f) { return {a.r + (b.r - a.r) * f, a.g + (b.g - a.g) * f, a.b + (b.b - a.b) * f}; }

// The metric to colour by: compute time when the workload reports it (the allreduce makes
// every rank's step time the slowest's, hiding the straggler), else step time.
std::string heat_metric(const RunResult& run) {
  for (const char* name : {"train/compute_time", "train/step_time"})
    for (const auto& s : run.series)
      if (s.name == name && s.labels.contains("rank") && !s.t.empty()) return name;
  return "";
}

}  // namespace

std::string heat_colour(double ratio) {
  if (!(ratio > 0)) return "#eef2f6";
  const Rgb blue{0x4c, 0x78, 0xa8}, white{0xff, 0xff, 0xff}, orange{0xf5, 0x85, 0x18}, red{0xb4, 0x23, 0x18};
  double l = std::clamp(std::log2(ratio), -1.0, 2.0);
  Rgb c = l < 0 ? mix(white, blue, -l) : l <= 1 ? mix(white, orange, l) : mix(orange, red, l - 1);
  return fmt::format("#{:02x}{:02x}{:02x}", static_cast<int>(std::lround(c.r)), static_cast<int>(std::lround(c.g)),
                     static_cast<int>(std::lround(c.b)));
}

namespace {

// A rank label as a number; a value that is none (or out of range) reads as -1.
std::int64_t rank_of(const LabelValue& r) {
  if (const auto* i = std::get_if<std::int64_t>(&r)) return *i;
  if (const auto* d = std::get_if<double>(&r)) return *d >= 0 && *d < 1e15 ? static_cast<std::int64_t>(*d) : -1;
  return std::atoll(std::get<std::string>(r).c_str());
}

// What the heat map shows: per rank, the median of `metric` in each of n time buckets.
struct HeatGrid {
  std::string metric, unit;
  double t0 = INFINITY, t1 = -INFINITY, width = 0, ref = 0;
  std::size_t n = 1;
  std::map<std::int64_t, std::vector<double>> cells;  // cells[rank][bucket]
  std::map<std::int64_t, double> rank_median;
};

HeatGrid build_grid(const RunResult& run, const std::string& metric) {
  HeatGrid g;
  g.metric = metric;
  std::map<std::int64_t, std::vector<const Series*>> by_rank;
  std::size_t longest = 0;
  for (const auto& s : run.series) {
    if (s.name != metric || !s.labels.contains("rank")) continue;
    by_rank[rank_of(s.labels.at("rank"))].push_back(&s);
    g.unit = s.unit;
    longest = std::max(longest, s.t.size());
    for (double t : s.t) {
      g.t0 = std::min(g.t0, t);
      g.t1 = std::max(g.t1, t);
    }
  }
  g.n = std::clamp<std::size_t>(longest, 1, kHeatmapColumns);
  std::vector<double> all_cells;
  for (const auto& [rank, series] : by_rank) {
    std::vector<std::vector<double>> buckets(g.n);
    std::vector<double> everything;
    for (const auto* s : series)
      for (std::size_t i = 0; i < s->t.size() && i < s->v.size(); ++i)
        if (std::isfinite(s->v[i])) {
          buckets[bucket_of(s->t[i], g.t0, g.t1, g.n)].push_back(s->v[i]);
          everything.push_back(s->v[i]);
        }
    auto& row = g.cells[rank];
    for (auto& b : buckets) {
      row.push_back(common::median(std::move(b)));
      if (std::isfinite(row.back())) all_cells.push_back(row.back());
    }
    g.rank_median[rank] = common::median(std::move(everything));
  }
  g.ref = common::median(std::move(all_cells));
  g.width = (g.t1 - g.t0) / static_cast<double>(g.n);
  return g;
}

// Fault windows above the cells.
std::string fault_row(const RunResult& run, const HeatGrid& g) {
  std::string out = "<tr class=\"faultrow\"><th>faults</th>";
  for (std::size_t b = 0; b < g.n; ++b) {
    double lo = g.t0 + static_cast<double>(b) * g.width, hi = lo + g.width;
    std::string names;
    for (const auto& f : run.faults) {
      if (!f.applied_at_s) continue;
      double end = f.reverted_at_s.value_or(run.duration_s > *f.applied_at_s ? run.duration_s : g.t1);
      if (*f.applied_at_s < hi && end > lo) names += (names.empty() ? "" : ", ") + f.name;
    }
    out += names.empty() ? "<td></td>"
                         : fmt::format("<td style=\"background:#e4572e\" title=\"{}\"></td>", escape(names));
  }
  return out + "<th></th></tr>\n";
}

std::string rank_rows(const HeatGrid& g) {
  std::string out;
  for (const auto& [rank, row] : g.cells) {
    out += fmt::format("<tr><th>rank {}</th>", rank);
    for (std::size_t b = 0; b < g.n; ++b) {
      double v = row[b];
      if (!std::isfinite(v)) {
        out += "<td style=\"background:#eef2f6\" title=\"no samples\"></td>";
        continue;
      }
      double lo = g.t0 + static_cast<double>(b) * g.width;
      out += fmt::format("<td style=\"background:{}\" title=\"rank {}, {:.1f}-{:.1f} s: {} (x{:.2f})\"></td>",
                         heat_colour(v / g.ref), rank, lo, lo + g.width, escape(format_unit(v, g.unit)), v / g.ref);
    }
    const double median = g.rank_median.at(rank);
    out += fmt::format("<th class=\"mono\">&nbsp;{} x{:.2f}</th></tr>\n", escape(format_unit(median, g.unit)),
                       median / g.ref);
  }
  return out;
}

}  // namespace

std::string rank_heatmap_html(const RunResult& run) {
  const std::string metric = heat_metric(run);
  if (metric.empty()) return "<p class=\"empty\">This run has no per-rank step or compute time series.</p>";
  const HeatGrid g = build_grid(run, metric);
  std::string out = fmt::format(
      "<p class=\"note\">Each cell: the median <code>{}</code> of one rank over {:.3g} s, against the run's median "
      "cell ({}). Blue is faster, red slower; hover a cell for its value.{}</p>\n",
      escape(metric), g.width, escape(format_unit(g.ref, g.unit)),
      metric == "train/compute_time" ? " Compute time, not step time: the allreduce makes every rank wait for the "
                                       "slowest, so only compute time shows which rank is slow."
                                     : "");
  out += "<div class=\"scroll\"><table class=\"heat\">\n";
  out += fault_row(run, g);
  out += rank_rows(g);
  // Time axis: a label every 8 buckets.
  out += "<tr class=\"axis\"><th>time</th>";
  for (std::size_t b = 0; b < g.n; b += 8)
    out += fmt::format("<td colspan=\"{}\">{:.1f} s</td>", std::min<std::size_t>(8, g.n - b),
                       g.t0 + static_cast<double>(b) * g.width);
  out += "<th></th></tr>\n</table></div>\n";
  out += "<div class=\"heat-legend\"><span>0.5x</span><span class=\"bar\"></span><span>4x the median cell</span>"
         "<span class=\"swatch\" style=\"background:#e4572e\"></span><span>fault window</span></div>\n";
  return out;
}

}  // namespace chaosbench::reports::html

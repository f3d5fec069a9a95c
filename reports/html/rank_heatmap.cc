#include "reports/html/rank_heatmap.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>

#include "reports/html/downsample.h"
#include "reports/html/html_text.h"

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

std::string rank_heatmap_html(const RunResult& run) {
  const std::string metric = heat_metric(run);
  if (metric.empty()) return "<p class=\"empty\">This run has no per-rank step or compute time series.</p>";
  std::map<std::int64_t, std::vector<const Series*>> by_rank;
  double t0 = INFINITY, t1 = -INFINITY;
  std::string unit;
  std::size_t longest = 0;
  for (const auto& s : run.series) {
    if (s.name != metric || !s.labels.contains("rank")) continue;
    const auto& r = s.labels.at("rank");
    std::int64_t rank = std::holds_alternative<std::int64_t>(r) ? std::get<std::int64_t>(r)
                        : std::holds_alternative<double>(r)     ? static_cast<std::int64_t>(std::get<double>(r))
                                                                : std::atoll(std::get<std::string>(r).c_str());
    by_rank[rank].push_back(&s);
    unit = s.unit;
    longest = std::max(longest, s.t.size());
    for (double t : s.t) {
      t0 = std::min(t0, t);
      t1 = std::max(t1, t);
    }
  }
  const std::size_t n = std::clamp<std::size_t>(longest, 1, kHeatmapColumns);
  // cells[rank][bucket]: the median of that rank's samples in the bucket.
  std::map<std::int64_t, std::vector<double>> cells;
  std::vector<double> all_cells;
  std::map<std::int64_t, double> rank_median;
  for (const auto& [rank, series] : by_rank) {
    std::vector<std::vector<double>> buckets(n);
    std::vector<double> everything;
    for (const auto* s : series)
      for (std::size_t i = 0; i < s->t.size() && i < s->v.size(); ++i)
        if (std::isfinite(s->v[i])) {
          buckets[bucket_of(s->t[i], t0, t1, n)].push_back(s->v[i]);
          everything.push_back(s->v[i]);
        }
    auto& row = cells[rank];
    for (auto& b : buckets) {
      row.push_back(median_of(b));
      if (std::isfinite(row.back())) all_cells.push_back(row.back());
    }
    rank_median[rank] = median_of(everything);
  }
  const double ref = median_of(all_cells);
  const double width = (t1 - t0) / static_cast<double>(n);

  std::string out = fmt::format(
      "<p class=\"note\">Each cell: the median <code>{}</code> of one rank over {:.3g} s, against the run's median "
      "cell ({}). Blue is faster, red slower; hover a cell for its value.{}</p>\n",
      escape(metric), width, escape(format_unit(ref, unit)),
      metric == "train/compute_time" ? " Compute time, not step time: the allreduce makes every rank wait for the "
                                       "slowest, so only compute time shows which rank is slow."
                                     : "");
  out += "<div class=\"scroll\"><table class=\"heat\">\n";
  // Fault windows above the cells.
  out += "<tr class=\"faultrow\"><th>faults</th>";
  for (std::size_t b = 0; b < n; ++b) {
    double lo = t0 + static_cast<double>(b) * width, hi = lo + width;
    std::string names;
    for (const auto& f : run.faults) {
      if (!f.applied_at_s) continue;
      double end = f.reverted_at_s.value_or(run.duration_s > *f.applied_at_s ? run.duration_s : t1);
      if (*f.applied_at_s < hi && end > lo) names += (names.empty() ? "" : ", ") + f.name;
    }
    out += names.empty() ? "<td></td>"
                         : fmt::format("<td style=\"background:#e4572e\" title=\"{}\"></td>", escape(names));
  }
  out += "<th></th></tr>\n";
  for (const auto& [rank, row] : cells) {
    out += fmt::format("<tr><th>rank {}</th>", rank);
    for (std::size_t b = 0; b < n; ++b) {
      double v = row[b];
      if (!std::isfinite(v)) {
        out += "<td style=\"background:#eef2f6\" title=\"no samples\"></td>";
        continue;
      }
      double lo = t0 + static_cast<double>(b) * width;
      out += fmt::format("<td style=\"background:{}\" title=\"rank {}, {:.1f}-{:.1f} s: {} (x{:.2f})\"></td>",
                         heat_colour(v / ref), rank, lo, lo + width, escape(format_unit(v, unit)), v / ref);
    }
    out += fmt::format("<th class=\"mono\">&nbsp;{} x{:.2f}</th></tr>\n", escape(format_unit(rank_median[rank], unit)),
                       rank_median[rank] / ref);
  }
  // Time axis: a label every 8 buckets.
  out += "<tr class=\"axis\"><th>time</th>";
  for (std::size_t b = 0; b < n; b += 8)
    out += fmt::format("<td colspan=\"{}\">{:.1f} s</td>", std::min<std::size_t>(8, n - b),
                       t0 + static_cast<double>(b) * width);
  out += "<th></th></tr>\n</table></div>\n";
  out += "<div class=\"heat-legend\"><span>0.5x</span><span class=\"bar\"></span><span>4x the median cell</span>"
         "<span class=\"swatch\" style=\"background:#e4572e\"></span><span>fault window</span></div>\n";
  return out;
}

}  // namespace chaosbench::reports::html

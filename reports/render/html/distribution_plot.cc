#include "reports/render/html/distribution_plot.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "common/values/percentile.h"
#include "reports/render/html/html_text.h"
#include "reports/render/html/plot_axis.h"

namespace chaosbench::reports::html {
namespace {

constexpr double kBandTop = 14, kBandBottom = 90;      // the tolerance band and the baseline's line
constexpr double kBaseLane = 32, kCurrentLane = 71;    // lane centres
constexpr double kSpread = 12;                         // dots lie within ±kSpread of their lane's centre
constexpr double kBoxHalf = 9;                         // half the box's height
constexpr double kAxis = 95;                           // the axis line; tick labels under it

std::vector<double> finite(const std::vector<double>& v) {
  std::vector<double> out;
  for (double x : v)
    if (std::isfinite(x)) out.push_back(x);
  return out;
}

bool quantile_strip(const MetricComparison& c) { return c.basis != "runs" && c.stat != "value"; }

// Every run-level statistic is a geometric mean when all the figures are positive
// (gate_runs.cc), else a mean.
bool geometric(const MetricComparison& c) {
  auto positive = [](const std::vector<double>& v) { return std::all_of(v.begin(), v.end(), [](double x) { return x > 0; }); };
  return positive(c.baseline_points) && positive(c.current_points);
}

// What the i-th of a side's points is, for its tooltip.
std::string point_name(const MetricComparison& c, std::size_t i) {
  if (c.stat == "value" && c.basis != "runs") return "value";
  if (c.basis == "runs") return fmt::format("run {}", i + 1);
  return fmt::format("{} %", i * 5);  // the 21 quantiles 0, 5, ..., 100 %
}

// What the diamond marks.
std::string centre_name(const MetricComparison& c) {
  if (c.basis == "runs")
    return fmt::format("{} of the runs' {}", geometric(c) ? "geometric mean" : "mean", c.stat == "value" ? "values" : c.stat);
  return c.stat == "value" ? "value" : c.stat + " of the sample";
}

std::string diamond(double x, double y, const std::string& title) {
  return fmt::format("<polygon class=\"mark\" points=\"{0},{1} {2},{3} {0},{4} {5},{3}\"><title>{6}</title></polygon>",
                     svg_number(x), svg_number(y - 6), svg_number(x + 5), svg_number(y), svg_number(y + 6),
                     svg_number(x - 5), escape(title));
}

// The whiskers, box and median of a side with 3 or more points.
std::string box_marks(const FiveNumbers& f, const PlotScale& s, double y) {
  const std::string top = svg_number(y - kBoxHalf), height = svg_number(2 * kBoxHalf);
  const std::string cap_top = svg_number(y - kBoxHalf / 2), cap_bottom = svg_number(y + kBoxHalf / 2);
  std::string out = fmt::format("<line class=\"whisker\" x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\"/>", svg_number(s.at(f.min)),
                                svg_number(s.at(f.max)), svg_number(y));
  for (double v : {f.min, f.max})
    out += fmt::format("<line class=\"whisker\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>", svg_number(s.at(v)), cap_top,
                       cap_bottom);
  out += fmt::format("<rect class=\"box\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>", svg_number(s.at(f.q1)), top,
                     svg_number(std::max(s.at(f.q3) - s.at(f.q1), 1.0)), height);
  out += fmt::format("<line class=\"median\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>", svg_number(s.at(f.median)), top,
                     svg_number(y + kBoxHalf));
  return out;
}

// One side: its box (3 points or more), its dots spread over the lane by the golden-ratio
// sequence (deterministic, and neighbours never share a height), its statistic's diamond.
std::string side_marks(const MetricComparison& c, bool current, const PlotScale& s) {
  const std::vector<double>& points = current ? c.current_points : c.baseline_points;
  const double y = current ? kCurrentLane : kBaseLane, centre = current ? c.current : c.baseline;
  const auto five = five_numbers(points);
  const std::size_t n = finite(points).size();
  std::string out = fmt::format("<g class=\"side {}\" data-n=\"{}\"", current ? "c " + std::string(to_string(c.status)) : "b", n);
  if (five)
    out += fmt::format(" data-box=\"{:.6g} {:.6g} {:.6g} {:.6g} {:.6g}\"", five->min, five->q1, five->median, five->q3, five->max);
  out += ">";
  if (five && n >= 3) out += box_marks(*five, s, y);
  const bool hollow = quantile_strip(c);
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (!std::isfinite(points[i])) continue;
    const double offset = n == 1 ? 0 : (std::fmod(static_cast<double>(i) * 0.6180339887, 1.0) - 0.5) * 2 * kSpread;
    out += fmt::format("<circle class=\"{}\" cx=\"{}\" cy=\"{}\" r=\"{}\" data-v=\"{:.6g}\"><title>{}: {}</title></circle>",
                       hollow ? "q" : "p", svg_number(s.at(points[i])), svg_number(y + offset), n == 1 ? 3.5 : 2.6,
                       points[i], escape(point_name(c, i)), escape(format_unit(points[i], c.unit)));
  }
  if (std::isfinite(centre))
    out += diamond(s.at(centre), y, fmt::format("{}, {}: {}", current ? "this run" : "baseline", centre_name(c),
                                                format_unit(centre, c.unit)));
  return out + "</g>";
}

// The baseline's statistic ± tolerance, shaded across both lanes, its edge on the
// regression side dashed, and the baseline's statistic as a line through both lanes.
std::string band_marks(const MetricComparison& c, const PlotScale& s) {
  if (!std::isfinite(c.baseline)) return "";
  const double a = c.baseline * (1 - c.tolerance), b = c.baseline * (1 + c.tolerance);
  const double left = s.at(std::min(a, b)), right = s.at(std::max(a, b));
  std::string out = fmt::format(
      "<rect class=\"band\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"><title>{}</title></rect>", svg_number(left),
      svg_number(kBandTop), svg_number(std::max(right - left, 0.5)), svg_number(kBandBottom - kBandTop),
      escape(fmt::format("tolerance band: the baseline's {} ± {:g}% ({} to {}); a regression within it passes",
                         centre_name(c), c.tolerance * 100, format_unit(std::min(a, b), c.unit),
                         format_unit(std::max(a, b), c.unit))));
  out += fmt::format("<text class=\"band-label\" x=\"{}\" y=\"{}\">±{:g}%</text>", svg_number((left + right) / 2),
                     svg_number(kBandTop - 3), c.tolerance * 100);
  if (c.better == common::Better::kLower || c.better == common::Better::kHigher) {
    const double edge = s.at(c.better == common::Better::kLower ? std::max(a, b) : std::min(a, b));  // where a worse value leaves
    out += fmt::format("<line class=\"edge\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>", svg_number(edge),
                       svg_number(kBandTop), svg_number(kBandBottom));
  }
  out += fmt::format("<line class=\"centre\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>", svg_number(s.at(c.baseline)),
                     svg_number(kBandTop), svg_number(kBandBottom));
  return out;
}

// The axis: ticks labelled with bare numbers (sizes in bytes as sizes), the unit once at
// its start, and "log" under it on a logarithmic scale.
std::string axis_marks(const MetricComparison& c, const PlotScale& s) {
  std::string out = fmt::format("<g class=\"axis\"><line x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\"/>", svg_number(s.x0),
                                svg_number(s.x1), svg_number(kAxis));
  const bool bytes = c.unit == "bytes";
  for (double t : plot_ticks(s)) {
    const double x = s.at(t);
    const char* anchor = x < s.x0 + 12 ? "start" : x > s.x1 - 12 ? "end" : "middle";
    out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/><text x=\"{0}\" y=\"{3}\" text-anchor=\"{4}\">{5}"
                       "</text>",
                       svg_number(x), svg_number(kAxis), svg_number(kAxis + 3), svg_number(kAxis + 13), anchor,
                       escape(format_unit(t, bytes ? c.unit : "")));
  }
  const std::string unit = bytes ? "" : c.unit;
  if (!unit.empty() || s.log)
    out += fmt::format("<text class=\"unit\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}{}</text>", svg_number(kPlotLeft - 6),
                       svg_number(kAxis + 13), escape(unit), s.log ? (unit.empty() ? "log" : ", log") : "");
  return out + "</g>";
}

// "baseline" over "5 runs" (or "n 4000" samples; nothing for a single value), right of the axis's start.
std::string lane_label(const MetricComparison& c, bool current) {
  const double y = current ? kCurrentLane : kBaseLane;
  const std::uint64_t n = current ? c.n_current : c.n_baseline;
  const std::string count = c.basis == "runs" ? fmt::format("{} run{}", n, n == 1 ? "" : "s")
                            : c.stat == "value" ? ""
                                                : fmt::format("n {}", n);
  return fmt::format("<text class=\"lane\" x=\"{0}\" y=\"{1}\" text-anchor=\"end\">{2}</text>"
                     "<text class=\"n\" x=\"{0}\" y=\"{3}\" text-anchor=\"end\">{4}</text>",
                     svg_number(kPlotLeft - 6), svg_number(y - 1), current ? "this run" : "baseline", svg_number(y + 11),
                     count);
}

}  // namespace

std::optional<FiveNumbers> five_numbers(const std::vector<double>& points) {
  std::vector<double> v = finite(points);
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  auto q = [&](double p) { return common::percentile_sorted(v, p); };
  return FiveNumbers{v.front(), q(25), q(50), q(75), v.back()};
}

std::string distribution_svg(const MetricComparison& c) {
  std::vector<double> domain = c.baseline_points;
  domain.insert(domain.end(), c.current_points.begin(), c.current_points.end());
  for (double v : {c.baseline, c.current, c.baseline * (1 - c.tolerance), c.baseline * (1 + c.tolerance)}) domain.push_back(v);
  const PlotScale s = make_scale(domain, kPlotLeft, kPlotRight);
  std::string out = fmt::format(
      "<svg class=\"dist\" viewBox=\"0 0 {} {}\" role=\"img\" data-scale=\"{}\" data-domain=\"{:.6g} {:.6g}\" "
      "data-x=\"{} {}\"><title>{}</title>",
      svg_number(kPlotWidth), svg_number(kPlotHeight), s.log ? "log" : "linear", s.lo, s.hi, svg_number(s.x0),
      svg_number(s.x1), escape(fmt::format("{} {}: baseline against this run", c.name, c.stat)));
  out += band_marks(c, s);
  out += lane_label(c, false);
  out += lane_label(c, true);
  out += side_marks(c, false, s);
  out += side_marks(c, true, s);
  out += axis_marks(c, s);
  return out + "</svg>";
}

std::string distribution_caption(const MetricComparison& c) {
  const std::string centre = fmt::format("◆ the {}", centre_name(c));
  if (c.baseline_points.empty() && c.current_points.empty())
    return "No points in this comparison (a results.json from before the report plotted them): " + centre + " only.";
  if (c.stat == "value" && c.basis != "runs")
    return "One value per side: no distribution to test, so at most a WARN. " + centre + ".";
  if (c.basis == "runs")
    return fmt::format("Dots: each run's {} (one per run); box: their quartiles, whiskers to the extremes; {}.",
                       c.stat == "value" ? "value" : c.stat, centre);
  return fmt::format("Hollow dots: 21 quantiles (0, 5, …, 100 %) of each side's {}, not single samples; box: "
                     "quartiles, whiskers to the extremes; {}.",
                     c.stat == "p50" ? "samples" : "upper decile (the values tested for " + c.stat + ")", centre);
}

}  // namespace chaosbench::reports::html

#include "reports/render/html/line_chart.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "reports/render/html/html_text.h"
#include "reports/render/html/plot_axis.h"

namespace chaosbench::reports::html {
namespace {

constexpr double kWidth = 640, kHeight = 300;
constexpr double kLeft = 58, kRight = 624, kTop = 34, kBottom = 252;

PlotScale x_scale(const LineChart& c) {
  double lo = INFINITY, hi = -INFINITY;
  auto take = [&](double v) {
    if (!std::isfinite(v) || (c.log_x && v <= 0)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  };
  for (const auto& l : c.lines)
    for (double v : l.x) take(v);
  for (const auto& m : c.markers) take(m.x);
  if (!(lo < hi)) {  // one value or none: a range around it
    const double v = std::isfinite(lo) ? lo : 1;
    lo = c.log_x ? v / 2 : v - 1;
    hi = c.log_x ? v * 2 : v + 1;
  }
  return PlotScale{lo, hi, c.log_x, kLeft, kRight};
}

std::string axes(const LineChart& c, const PlotScale& xs, const PlotScale& ys) {
  std::string out;
  for (double t : plot_ticks(ys))
    out += fmt::format(
        "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" stroke=\"#e3e6ea\"/>"
        "<text x=\"{3}\" y=\"{4}\" text-anchor=\"end\" font-size=\"11\">{5}</text>",
        svg_number(kLeft), svg_number(kRight), svg_number(ys.at(t)), svg_number(kLeft - 5), svg_number(ys.at(t) + 4),
        escape(fmt::format("{:g}", t)));
  for (double t : c.x_ticks.empty() ? plot_ticks(xs) : c.x_ticks) {
    if (t < xs.lo || t > xs.hi) continue;
    out += fmt::format(
        "<line x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#eef0f2\"/>"
        "<text x=\"{0}\" y=\"{3}\" text-anchor=\"middle\" font-size=\"11\">{4}</text>",
        svg_number(xs.at(t)), svg_number(kTop), svg_number(kBottom), svg_number(kBottom + 15),
        escape(c.x_tick_text ? c.x_tick_text(t) : fmt::format("{:g}", t)));
  }
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#9aa3ad\"/>",
                     svg_number(kLeft), svg_number(kTop), svg_number(kRight - kLeft), svg_number(kBottom - kTop));
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"12\">{}</text>",
                     svg_number((kLeft + kRight) / 2), svg_number(kHeight - 12), escape(c.x_label));
  out += fmt::format(
      "<text x=\"14\" y=\"{0}\" text-anchor=\"middle\" font-size=\"12\" transform=\"rotate(-90 14 {0})\">{1}</text>",
      svg_number((kTop + kBottom) / 2), escape(c.y_label));
  return out;
}

// The line as polylines, broken where a point is missing or outside the y range.
std::string line_marks(const LineChart::Line& l, const PlotScale& xs, const PlotScale& ys, double y_lo, double y_hi) {
  std::string out, points;
  auto flush = [&] {
    if (points.empty()) return;
    out += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{} points=\"{}\"/>", escape(l.colour),
                       l.dash.empty() ? "" : fmt::format(" stroke-dasharray=\"{}\"", escape(l.dash)), points);
    points.clear();
  };
  for (std::size_t i = 0; i < l.x.size() && i < l.y.size(); ++i) {
    const double x = l.x[i], y = l.y[i];
    if (!std::isfinite(x) || !std::isfinite(y) || y < y_lo || y > y_hi || (xs.log && x <= 0)) {
      flush();
      continue;
    }
    points += fmt::format("{}{},{}", points.empty() ? "" : " ", svg_number(xs.at(x)), svg_number(ys.at(y)));
  }
  flush();
  return out;
}

std::string line_legend(const LineChart& c) {
  std::string out;
  double x = kLeft;
  for (const auto& l : c.lines) {
    out += fmt::format(
        "<line x1=\"{0}\" x2=\"{1}\" y1=\"12\" y2=\"12\" stroke=\"{2}\" stroke-width=\"2\"{3}/>"
        "<text x=\"{4}\" y=\"16\" font-size=\"11\">{5}</text>",
        svg_number(x), svg_number(x + 18), escape(l.colour),
        l.dash.empty() ? "" : fmt::format(" stroke-dasharray=\"{}\"", escape(l.dash)), svg_number(x + 22),
        escape(l.name));
    x += 30 + 6.2 * static_cast<double>(l.name.size());
  }
  return out;
}

std::string markers(const LineChart& c, const PlotScale& xs) {
  std::string out;
  for (std::size_t i = 0; i < c.markers.size(); ++i) {
    const auto& m = c.markers[i];
    if (!std::isfinite(m.x) || (xs.log && m.x <= 0)) continue;
    const double x = xs.at(m.x);
    // Labels step down so that markers close together stay readable.
    const double y = kTop + 12 + 12 * static_cast<double>(i % 4);
    const bool right = x < (kLeft + kRight) / 2;
    out += fmt::format(
        "<line x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\" stroke=\"{3}\" stroke-dasharray=\"3 3\"/>"
        "<text x=\"{4}\" y=\"{5}\" font-size=\"11\" fill=\"{3}\" text-anchor=\"{6}\" stroke=\"#fff\" "
        "stroke-width=\"3\" paint-order=\"stroke\">{7}</text>",
        svg_number(x), svg_number(kTop), svg_number(kBottom), escape(m.colour), svg_number(right ? x + 3 : x - 3),
        svg_number(y), right ? "start" : "end", escape(m.label));
  }
  return out;
}

}  // namespace

std::string line_chart_svg(const LineChart& c) {
  const PlotScale xs = x_scale(c);
  const PlotScale ys{c.y_lo, c.y_hi, false, kBottom, kTop};
  std::string out = fmt::format(
      "<svg class=\"chart\" viewBox=\"0 0 {} {}\" role=\"img\" font-family=\"sans-serif\" data-x-scale=\"{}\" "
      "data-x-domain=\"{:.6g} {:.6g}\" data-y-domain=\"{:.6g} {:.6g}\"><title>{}</title>",
      svg_number(kWidth), svg_number(kHeight), xs.log ? "log" : "linear", xs.lo, xs.hi, ys.lo, ys.hi,
      escape(c.title));
  out += axes(c, xs, ys);
  for (const auto& l : c.lines) out += line_marks(l, xs, ys, c.y_lo, c.y_hi);
  out += markers(c, xs);
  out += line_legend(c);
  return out + "</svg>";
}

}  // namespace chaosbench::reports::html

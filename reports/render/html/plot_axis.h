// The value axis of report.html's inline SVG plots (gate_distributions.h): a scale from
// data to pixels, linear or logarithmic, and "nice" tick values (1, 2, 5 x 10^k) to label
// it with. Pure arithmetic, no markup, so the tests can recompute every coordinate.
#pragma once

#include <string>
#include <vector>

namespace chaosbench::reports::html {

struct PlotScale {
  double lo = 0, hi = 1;      // the data range drawn (padded), lo < hi
  bool log = false;           // logarithmic: every value drawn is > 0
  double x0 = 0, x1 = 1;      // the pixels lo and hi land on

  // The pixel of `v`, clamped to [x0, x1] (a value off the scale sits at its edge).
  double at(double v) const;
};

// A scale over `values` (the non-finite ones ignored) from x0 to x1: logarithmic when
// every value is positive and the largest is more than 20 times the smallest (a latency
// sample's tail), else linear; padded by 4 % of the range on each side, and widened around
// a single value (±10 %, or ±1 for 0). No finite value: the range [0, 1].
PlotScale make_scale(const std::vector<double>& values, double x0, double x1);

// Tick values inside [scale.lo, scale.hi]: multiples of a 1, 2 or 5 x 10^k step giving
// 3 to 6 ticks on a linear scale; powers of ten (with 2 and 5 times them when the range
// spans less than three decades) on a logarithmic one.
std::vector<double> plot_ticks(const PlotScale& scale);

// A number for an SVG attribute: at most 2 decimals, no trailing zeros ("12.5", "80").
std::string svg_number(double v);

}  // namespace chaosbench::reports::html

#include "reports/render/html/plot_axis.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace chaosbench::reports::html {
namespace {

constexpr double kLogFrom = 20;   // largest / smallest above which the scale is logarithmic
constexpr double kPad = 0.04;     // of the range, on each side

// 1, 2 or 5 x 10^k nearest above `raw`'s leading digit.
double nice_step(double raw) {
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double r = raw / mag;
  return (r < 1.5 ? 1 : r < 3.5 ? 2 : r < 7.5 ? 5 : 10) * mag;
}

}  // namespace

double PlotScale::at(double v) const {
  double f = log ? (std::log10(std::max(v, lo)) - std::log10(lo)) / (std::log10(hi) - std::log10(lo))
                 : (v - lo) / (hi - lo);
  if (!std::isfinite(f)) f = v > lo ? 1 : 0;
  return x0 + std::clamp(f, 0.0, 1.0) * (x1 - x0);
}

PlotScale make_scale(const std::vector<double>& values, double x0, double x1) {
  PlotScale s;
  s.x0 = x0;
  s.x1 = x1;
  double lo = INFINITY, hi = -INFINITY;
  for (double v : values)
    if (std::isfinite(v)) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  if (!(lo <= hi)) return s;  // no finite value: [0, 1]
  if (lo == hi) {
    const double half = lo == 0 ? 1 : std::fabs(lo) * 0.1;
    s.lo = lo - half;
    s.hi = hi + half;
    return s;
  }
  s.log = lo > 0 && hi / lo > kLogFrom;
  if (s.log) {
    const double a = std::log10(lo), b = std::log10(hi), pad = (b - a) * kPad;
    s.lo = std::pow(10.0, a - pad);
    s.hi = std::pow(10.0, b + pad);
  } else {
    const double pad = (hi - lo) * kPad;
    s.lo = lo - pad;
    s.hi = hi + pad;
  }
  return s;
}

std::vector<double> plot_ticks(const PlotScale& scale) {
  std::vector<double> out;
  if (scale.log) {
    const int first = static_cast<int>(std::floor(std::log10(scale.lo)));
    const int last = static_cast<int>(std::ceil(std::log10(scale.hi)));
    const bool fine = last - first <= 3;  // under three decades: 2 and 5 times the powers too
    for (int k = first; k <= last; ++k)
      for (double m : {1.0, 2.0, 5.0}) {
        const double v = m * std::pow(10.0, k);
        if ((m == 1 || fine) && v >= scale.lo && v <= scale.hi) out.push_back(v);
      }
    return out;
  }
  const double step = nice_step((scale.hi - scale.lo) / 4);
  for (double k = std::ceil(scale.lo / step); k * step <= scale.hi + step * 1e-9; ++k)
    out.push_back(std::fabs(k) < 1e-12 ? 0.0 : k * step);
  return out;
}

std::string svg_number(double v) {
  std::string s = fmt::format("{:.2f}", v);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

}  // namespace chaosbench::reports::html

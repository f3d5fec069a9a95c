#include "common/values/percentile.h"

#include <algorithm>

namespace chaosbench::common {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

template <class T>
double sorted_percentile(std::span<const T> sorted, double p) {
  return percentile_of(sorted.size(), p, [&](std::size_t k) { return static_cast<double>(sorted[k]); });
}

}  // namespace

double percentile_index(std::size_t n, double p) {
  if (n == 0 || !(p >= 0 && p <= 100)) return kNaN;  // NaN fails both comparisons
  // p / 100 first, then times (n - 1): numpy's order of operations (np.percentile divides
  // q by 100; method "linear" takes (n - 1) * q), so h rounds as numpy's does.
  return static_cast<double>(n - 1) * (p / 100.0);
}

double interpolate(double low, double high, double fraction) {
  if (fraction == 0 || low == high) return low;  // also both ends the same infinity
  if (std::isinf(low) || std::isinf(high)) return std::isinf(low) && std::isinf(high) ? kNaN : std::isinf(low) ? low : high;
  const double diff = high - low;
  // numpy's _lerp: from the lower end below the middle, from the upper end from it on,
  // which keeps the result within [low, high] and exact at both ends.
  return fraction < 0.5 ? low + diff * fraction : high - diff * (1.0 - fraction);
}

double percentile(std::vector<double> values, double p) {
  if (std::any_of(values.begin(), values.end(), [](double v) { return std::isnan(v); })) return kNaN;
  const double h = percentile_index(values.size(), p);
  if (std::isnan(h)) return kNaN;
  const auto below = static_cast<std::size_t>(h);
  const auto at = values.begin() + static_cast<std::ptrdiff_t>(below);
  std::nth_element(values.begin(), at, values.end());
  const double fraction = h - static_cast<double>(below);
  if (fraction == 0 || below + 1 >= values.size()) return *at;
  // nth_element leaves everything after `at` no smaller: the next order statistic is
  // their minimum.
  return interpolate(*at, *std::min_element(at + 1, values.end()), fraction);
}

double percentile_sorted(std::span<const double> sorted, double p) { return sorted_percentile(sorted, p); }

double percentile_sorted(std::span<const float> sorted, double p) { return sorted_percentile(sorted, p); }

double median(std::vector<double> values) { return percentile(std::move(values), 50); }

}  // namespace chaosbench::common

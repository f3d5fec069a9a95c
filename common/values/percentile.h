// The one percentile of chaosbench: every p50/p90/p99 in results.json, the load
// generators' summaries, the gate's statistics, the probes' window statistics and the
// reports' medians and quantiles come from here, so two numbers named p99 are always the
// same statistic. The definition is numpy's default (method "linear", Hyndman & Fan 1996
// type 7), the one vLLM's benchmark_serving and most serving benchmarks report; see
// docs/report-formats.md ("Percentiles") for the choice.
//
// For n values in ascending order x[0] <= ... <= x[n-1] and p in [0, 100]:
//   h = (n - 1) * (p / 100),  P = x[floor h] + (h - floor h) * (x[floor h + 1] - x[floor h])
// p 0 is the minimum, p 100 the maximum, p 50 the median (the mean of the two middle
// values of an even count).
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <vector>

namespace chaosbench::common {

// The position h = (n - 1) * (p / 100) of the p-th percentile among n ascending values
// (0-based; its fraction is the interpolation weight). NaN when n is 0 or p is NaN or
// outside [0, 100]: a percentile that does not exist, not a clamped one.
double percentile_index(std::size_t n, double p);

// low + fraction * (high - low), for low <= high and fraction in [0, 1), computed as
// numpy's _lerp (from the nearer end), so results match numpy's to the last bit. An
// infinite end is the limit of the line (that end); -inf to +inf is NaN.
double interpolate(double low, double high, double fraction);

// The p-th percentile of `values` in any order (the copy is reordered: O(n)). NaN when
// there are none, when p is NaN or outside [0, 100], or when any value is NaN (as numpy).
double percentile(std::vector<double> values, double p);

// The same for values already in ascending order, without NaN (the caller's sort could
// not have ordered one): O(1), nothing copied. NaN for none or p outside [0, 100].
double percentile_sorted(std::span<const double> sorted, double p);
double percentile_sorted(std::span<const float> sorted, double p);

// percentile(values, 50).
double median(std::vector<double> values);

// The p-th percentile of n values known only through `at(k)`, the k-th smallest
// (0-based): for order statistics that are never laid out in one sorted array (a
// bootstrap resample kept as counts, a sorted sample with one value left out). `at` is
// called once or twice, with increasing k (floor h, then floor h + 1 unless h is whole).
// NaN for n 0 or p outside [0, 100].
template <class At>
double percentile_of(std::size_t n, double p, At&& at) {
  const double h = percentile_index(n, p);
  if (std::isnan(h)) return std::numeric_limits<double>::quiet_NaN();
  const auto below = static_cast<std::size_t>(h);
  const double fraction = h - static_cast<double>(below);
  const double low = at(below);
  if (fraction == 0 || below + 1 >= n) return low;
  return interpolate(low, at(below + 1), fraction);
}

}  // namespace chaosbench::common

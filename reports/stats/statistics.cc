#include "reports/stats/statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/values/percentile.h"
#include "reports/stats/split_mix64.h"

namespace chaosbench::reports {
namespace {

// max_points evenly spaced order statistics of an ascending sample (all of it when it is
// no longer than that).
std::vector<double> reduce_sorted(const std::vector<double>& sorted, std::size_t max_points) {
  if (max_points == 0 || sorted.size() <= max_points) return sorted;
  std::vector<double> out;
  out.reserve(max_points);
  const double n = static_cast<double>(sorted.size());
  const double m = static_cast<double>(max_points);
  for (std::size_t i = 0; i < max_points; ++i) {
    auto idx = static_cast<std::size_t>((static_cast<double>(i) + 0.5) * n / m);
    out.push_back(sorted[std::min(idx, sorted.size() - 1)]);
  }
  return out;
}

// The p-th percentile of a resample (with replacement) of the ascending `sorted`. As
// the values are sorted, the resample's k-th smallest value (0-based) is sorted[j] for
// the smallest j whose draws, counted up to j, exceed k: a counting pass instead of a
// selection. percentile_of asks for increasing k, so one pass serves both order
// statistics of the interpolation.
double resampled_percentile(const std::vector<double>& sorted, double p, SplitMix64& rng,
                            std::vector<std::uint32_t>& counts) {
  const std::size_t n = sorted.size();
  counts.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i) ++counts[rng.below(n)];
  std::size_t j = 0, seen = counts[0];
  return common::percentile_of(n, p, [&](std::size_t k) {
    while (seen <= k && j + 1 < n) seen += counts[++j];
    return sorted[j];
  });
}

// Exact two-sided p of U = u (an integer) for samples of n1 and n2 values, no ties.
// The number of arrangements with U = k is the coefficient of q^k in the Gaussian
// binomial [n1 + n2 choose n1]_q = prod_{i=1..n1} (1 - q^(n2+i)) / (1 - q^i), built one
// factor at a time (each partial product is itself a Gaussian binomial, so it stays a
// polynomial with non-negative integer coefficients).
double exact_mann_whitney_p(std::size_t n1, std::size_t n2, double u) {
  const std::size_t top = n1 * n2;
  std::vector<long double> c(top + 1, 0.0L);
  c[0] = 1.0L;
  std::size_t degree = 0;
  for (std::size_t i = 1; i <= n1; ++i) {
    const std::size_t k = n2 + i;
    const std::size_t new_degree = degree + n2;
    // times (1 - q^k): downwards, so c[j - k] is still the old coefficient
    for (std::size_t j = std::min(top, degree + k); j >= k; --j) c[j] -= c[j - k];
    // divided by (1 - q^i): g[j] = h[j] + g[j - i], upwards
    for (std::size_t j = i; j <= std::min(top, degree + k); ++j) c[j] += c[j - i];
    degree = new_degree;
  }
  long double total = 0, lower = 0, upper = 0;
  for (std::size_t k = 0; k <= top; ++k) {
    total += c[k];
    if (static_cast<double>(k) <= u) lower += c[k];
    if (static_cast<double>(k) >= u) upper += c[k];
  }
  double p = static_cast<double>(2.0L * std::min(lower, upper) / total);
  return std::min(1.0, p);
}

}  // namespace

double median_sorted_without(const std::vector<double>& sorted, std::size_t skip) {
  const std::size_t n = sorted.size() - (skip < sorted.size() ? 1 : 0);
  auto at = [&](std::size_t k) { return sorted[skip < sorted.size() && k >= skip ? k + 1 : k]; };
  return common::percentile_of(n, 50, at);  // NaN when nothing is left
}

std::vector<double> upper_tail(std::vector<double> values, double p) {
  if (values.empty()) return values;
  std::sort(values.begin(), values.end());
  // Every value equal to the threshold belongs to the tail, however many tie with it.
  const auto first = std::lower_bound(values.begin(), values.end(), common::percentile_sorted(values, p));
  return {first, values.end()};
}

double relative_change(double baseline, double current) {
  if (baseline == 0) {
    if (current == 0) return 0;
    return current > 0 ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
  }
  return (current - baseline) / std::fabs(baseline);
}

MannWhitneyResult mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b) {
  MannWhitneyResult r;
  const std::size_t n1 = a.size(), n2 = b.size();
  if (n1 == 0 || n2 == 0) return r;
  // Pool, sort, give tied values their mid-rank; U1 = R1 - n1 (n1 + 1) / 2.
  std::vector<std::pair<double, bool>> pooled;  // value, from a
  pooled.reserve(n1 + n2);
  for (double x : a) pooled.emplace_back(x, true);
  for (double x : b) pooled.emplace_back(x, false);
  std::sort(pooled.begin(), pooled.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  const std::size_t n = pooled.size();
  double rank_sum_a = 0, tie_term = 0;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i + 1;  // at least one step, whatever a stray NaN compares as
    while (j < n && pooled[j].first == pooled[i].first) ++j;
    const double t = static_cast<double>(j - i);
    const double mid_rank = static_cast<double>(i + 1 + j) / 2.0;  // ranks i+1 .. j
    for (std::size_t k = i; k < j; ++k)
      if (pooled[k].second) rank_sum_a += mid_rank;
    tie_term += t * t * t - t;
    i = j;
  }
  const double d1 = static_cast<double>(n1), d2 = static_cast<double>(n2), dn = static_cast<double>(n);
  r.u = rank_sum_a - d1 * (d1 + 1) / 2.0;
  if (tie_term == 0 && n1 <= kMannWhitneyExactMax && n2 <= kMannWhitneyExactMax) {
    r.exact = true;
    r.p_value = exact_mann_whitney_p(n1, n2, r.u);
    return r;
  }
  const double variance = d1 * d2 / 12.0 * ((dn + 1) - tie_term / (dn * (dn - 1)));
  if (!(variance > 0)) return r;  // every value the same
  const double z = std::max(0.0, std::fabs(r.u - d1 * d2 / 2.0) - 0.5) / std::sqrt(variance);
  r.p_value = std::min(1.0, std::erfc(z / std::sqrt(2.0)));
  return r;
}

std::optional<Interval> bootstrap_change_ci(const std::vector<double>& baseline, const std::vector<double>& current,
                                            double p, const BootstrapOptions& options) {
  if (baseline.empty() || current.empty() || options.resamples <= 0) return std::nullopt;
  auto prepare = [&](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return reduce_sorted(v, options.max_points);
  };
  const auto base = prepare(baseline);
  const auto cur = prepare(current);
  SplitMix64 rng(options.seed);
  std::vector<std::uint32_t> buf;
  std::vector<double> changes;
  changes.reserve(static_cast<std::size_t>(options.resamples));
  for (int i = 0; i < options.resamples; ++i) {
    double b = resampled_percentile(base, p, rng, buf);
    double c = resampled_percentile(cur, p, rng, buf);
    changes.push_back(relative_change(b, c));
  }
  std::sort(changes.begin(), changes.end());
  // The changes' (1 - c)/2 and (1 + c)/2 quantiles, as every percentile here.
  const double tail = std::clamp((1.0 - options.confidence) / 2.0, 0.0, 0.5) * 100.0;
  return Interval{common::percentile_sorted(changes, tail), common::percentile_sorted(changes, 100.0 - tail)};
}

double within_run_noise(const std::vector<double>& values, double p) {
  const std::size_t per = values.size() / kNoiseBatches;
  if (per < 8) return 0;
  std::vector<double> batch_stats;
  for (std::size_t b = 0; b < kNoiseBatches; ++b) {
    std::vector<double> batch(values.begin() + static_cast<std::ptrdiff_t>(b * per),
                              values.begin() + static_cast<std::ptrdiff_t>((b + 1) * per));
    batch_stats.push_back(common::percentile(std::move(batch), p));
  }
  std::sort(batch_stats.begin(), batch_stats.end());
  const double mid = common::percentile_sorted(batch_stats, 50);
  if (!(std::abs(mid) > 0)) return 0;
  return (common::percentile_sorted(batch_stats, 75) - common::percentile_sorted(batch_stats, 25)) / 2 / std::abs(mid);
}

}  // namespace chaosbench::reports

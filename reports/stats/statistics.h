// The statistics behind the baseline gate (gate.h): the upper tail a high percentile is
// tested on, the two-sided Mann-Whitney U test and a percentile-bootstrap confidence
// interval of the relative change of a percentile between two samples. Percentiles are
// common/values/percentile.h's (numpy's linear), as everywhere. Pure functions, deterministic:
// the bootstrap draws from splitmix64 seeded by the caller. docs/gate.md explains the
// method and where the ideas come from.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace chaosbench::reports {

// The median of ascending `sorted` without its element at `skip` (a value against its
// peers): O(1). NaN when nothing is left.
double median_sorted_without(const std::vector<double>& sorted, std::size_t skip);

// The values at or above the sample's p-th percentile, ascending: the tail a
// high-percentile comparison tests.
std::vector<double> upper_tail(std::vector<double> values, double p);

// (current - baseline) / |baseline|; 0 when both are 0, +-infinity when only the
// baseline is 0.
double relative_change(double baseline, double current);

struct MannWhitneyResult {
  double u = 0;        // U of the first sample: pairs (a, b) with a > b, ties counted 1/2
  double p_value = 1;  // two-sided
  bool exact = false;  // from the exact null distribution, not the normal approximation
};

// Two-sided Mann-Whitney U (Wilcoxon rank-sum) test of a against b.
// - Exact: when neither sample has more than kMannWhitneyExactMax values and no value
//   is tied, p is read from the exact permutation distribution of U (the coefficients
//   of the Gaussian binomial [n1+n2 choose n1]_q): p = min(1, 2 min(P(U <= u), P(U >= u))).
// - Otherwise the normal approximation with the tie correction of the variance,
//   sigma^2 = n1 n2 / 12 ((n + 1) - sum(t^3 - t) / (n (n - 1))), and a continuity
//   correction of 1/2: z = (|U - n1 n2 / 2| - 1/2) / sigma, p = erfc(z / sqrt 2).
// p is 1 when a sample is empty or every value is the same.
inline constexpr std::size_t kMannWhitneyExactMax = 50;
// Values must be finite (callers drop NaN samples first).
MannWhitneyResult mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b);

// How much the p-th percentile wanders within one run: the sample (in time order) cut into
// kNoiseBatches consecutive batches, the percentile of each, and half their interquartile
// range relative to their median (0 for fewer than 8 values per batch). Batch means, as
// for autocorrelated simulation output: machine noise that comes and goes over seconds
// shows up here, where a test on individual samples takes it for a difference.
inline constexpr std::size_t kNoiseBatches = 10;
double within_run_noise(const std::vector<double>& values_in_time_order, double p);

struct Interval {
  double low = 0, high = 0;
};

struct BootstrapOptions {
  double confidence = 0.99;   // the interval covers this share of the resampled changes
  int resamples = 2000;       // B
  std::uint64_t seed = 1;     // splitmix64 seed
  std::size_t max_points = 2000;  // larger samples are reduced to this many first
};

// Percentile-bootstrap confidence interval of relative_change(P_p(baseline), P_p(current)),
// P_p the p-th percentile: each of `resamples` rounds redraws both samples with
// replacement, independently, and computes the change; the interval is the (1-c)/2 and
// (1+c)/2 quantiles of those changes. A sample of more than max_points values
// is first reduced to max_points evenly spaced order statistics (the values at the
// quantiles (i + 1/2) / max_points), which keeps its distribution but bootstraps it as a
// sample of max_points: the interval is then wider than the full sample's (conservative),
// and 2000 rounds cost milliseconds however long the series. nullopt when a side is empty.
std::optional<Interval> bootstrap_change_ci(const std::vector<double>& baseline, const std::vector<double>& current,
                                            double p, const BootstrapOptions& options);

}  // namespace chaosbench::reports

// The history gate's change-point pass (history_gate.h, docs/history.md): where in a
// metric's run-by-run history the level stepped, and whether that step is real. Pure and
// deterministic: the permutation test draws from splitmix64 seeded by the caller.
//
// - The statistic. For each split of a segment into a before and an after part (each of
//   at least min_segment values, 3 by default), the two-sample Student's t with pooled variance,
//   |mean(after) - mean(before)| / (s_p √(1/n1 + 1/n2)) (SciPy's ttest_ind with
//   equal_var=True); the split with the largest is the most likely single step (the
//   likelihood-ratio estimate of a mean shift, Worsley 1979). Pooled, not Welch's: with
//   three values on one side Welch's variance of that side is so unsteady that the
//   largest t over splits is mostly chance at the ends of the window, where the newest
//   step sits (docs/history.md has the numbers).
// - Outliers. Before the statistic, each value's distance from the running median of 5
//   (mirrored at the ends, as scipy.ndimage.median_filter mode="mirror", so an end value
//   is not its own median) is clipped to ±clip · σ̂, σ̂ the median absolute successive difference / (√2 · 0.6745):
//   a scale that neither a step (one difference) nor a lone outlier moves. A single wild
//   run then no longer inflates the pooled variance and hides a real step.
// - Significance. The largest t over splits is not Student-distributed (it is the
//   maximum of many), so its p-value comes from a permutation test: the same statistic
//   (clipping included) on `permutations` random orders of the segment, p = (1 + #{max t
//   of a permutation >= the observed}) / (1 + permutations) (SciPy's permutation_test
//   estimator). Under no change any order is as likely, so the false-positive rate is
//   alpha whatever the distribution.
// - Several steps: binary segmentation. A significant split cuts the segment in two and
//   each part of at least 2 · min_segment values is searched again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace chaosbench::reports {

struct ChangePointOptions {
  double alpha = 0.01;          // a split is a step when its permutation p-value is below this
  std::size_t permutations = 1999;  // at least 20 / alpha are used, so p can reach alpha
  std::uint64_t seed = 1;       // splitmix64 seed (mixed with each segment's bounds)
  // Values on each side of a split (at least 2). 3: two runs that happen to sit high at
  // the end of a window (a wild newest run and its neighbour) make no step, and the
  // maximum over fewer splits has more power (docs/history.md has the numbers).
  std::size_t min_segment = 3;
  double clip = 2.5;            // outlier clipping at clip · σ̂ from the running median; 0: none
};

struct ChangePoint {
  std::size_t index = 0;             // the first value of the new level
  std::size_t begin = 0, end = 0;    // the segment [begin, end) the split was found in
  double statistic = 0;              // |t| at the split (on the clipped segment)
  double p_value = 1;                // permutation p-value of the largest |t| over splits
  double before = 0, after = 0;      // medians of the segments either side, after segmentation
};

// The best split of `values` as they are (no clipping): its index (first value after the
// split) and |t|; nullopt when fewer than 2 · min_segment values. |t| is +infinity when
// both sides are constant and differ, 0 when all values are equal.
struct Split {
  std::size_t index = 0;
  double statistic = 0;
};
std::optional<Split> best_split(const std::vector<double>& values, std::size_t min_segment);

// `values` with each value's residual from the running median of 5 clipped to
// ±clip · σ̂ (above); unchanged when clip is 0, σ̂ is 0 or there are fewer than 3 values.
std::vector<double> clip_outliers(const std::vector<double>& values, double clip);

// The best split of the clipped `values` and its permutation p-value; nullopt as best_split.
struct SplitTest {
  Split split;
  double p_value = 1;
  std::size_t permutations = 0;
};
std::optional<SplitTest> test_split(const std::vector<double>& values, const ChangePointOptions& options);

// Every significant step by binary segmentation, in index order; its first test is
// test_split(values, options). Values must be finite.
std::vector<ChangePoint> find_change_points(const std::vector<double>& values, const ChangePointOptions& options);

}  // namespace chaosbench::reports

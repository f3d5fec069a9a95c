#include "reports/stats/change_point.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "common/values/percentile.h"
#include "reports/stats/split_mix64.h"

namespace chaosbench::reports {
namespace {

// Φ⁻¹(3/4): the median absolute deviation of a normal variable is this many sds.
constexpr double kMadPerSd = 0.6744897501960817;

// The median of the 5 values around i, mirrored at the ends (index -1 is 1, n is n - 2):
// an end value counts once, so a lone outlier there is clipped like one inside, where
// repeating the end value would make it its own median. Needs 3 values or more.
double running_median5(const std::vector<double>& v, std::size_t i) {
  const auto last = static_cast<std::ptrdiff_t>(v.size()) - 1;
  std::array<double, 5> w{};
  for (std::ptrdiff_t d = -2; d <= 2; ++d) {
    std::ptrdiff_t j = static_cast<std::ptrdiff_t>(i) + d;
    if (j < 0) j = -j;
    if (j > last) j = 2 * last - j;
    w[static_cast<std::size_t>(d + 2)] = v[static_cast<std::size_t>(std::clamp<std::ptrdiff_t>(j, 0, last))];
  }
  std::nth_element(w.begin(), w.begin() + 2, w.end());
  return w[2];
}

std::uint64_t segment_seed(std::uint64_t seed, std::size_t begin, std::size_t end) {
  SplitMix64 mix(seed ^ (static_cast<std::uint64_t>(begin) * 0xd1b54a32d192ed03ULL) ^
                 (static_cast<std::uint64_t>(end) * 0x9e3779b97f4a7c15ULL));
  return mix.next();
}

// The whole series is tested with options.seed itself, so test_split(values, options)
// repeats that first test exactly; each part gets a seed of its own.
void segment(const std::vector<double>& values, std::size_t begin, std::size_t end, const ChangePointOptions& options,
             std::vector<ChangePoint>& out) {
  if (end - begin < 2 * options.min_segment) return;
  const std::vector<double> part(values.begin() + static_cast<std::ptrdiff_t>(begin),
                                 values.begin() + static_cast<std::ptrdiff_t>(end));
  ChangePointOptions sub = options;
  if (begin != 0 || end != values.size()) sub.seed = segment_seed(options.seed, begin, end);
  const auto test = test_split(part, sub);
  if (!test || !(test->p_value < options.alpha)) return;
  const std::size_t at = begin + test->split.index;
  out.push_back({at, begin, end, test->split.statistic, test->p_value, 0, 0});
  segment(values, begin, at, options, out);
  segment(values, at, end, options, out);
}

}  // namespace

std::optional<Split> best_split(const std::vector<double>& values, std::size_t min_segment) {
  const std::size_t m = values.size();
  min_segment = std::max<std::size_t>(min_segment, 2);
  if (m < 2 * min_segment) return std::nullopt;
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  const double range = *hi - *lo;
  Split best{min_segment, 0.0};
  if (!(range > 0)) return best;  // all equal: no step anywhere
  // Prefix sums of the centred values (centring keeps Σx² - n·mean² from cancelling).
  double mean = 0;
  for (double v : values) mean += v;
  mean /= static_cast<double>(m);
  std::vector<double> s1(m + 1, 0.0), s2(m + 1, 0.0);
  for (std::size_t i = 0; i < m; ++i) {
    const double c = values[i] - mean;
    s1[i + 1] = s1[i] + c;
    s2[i + 1] = s2[i] + c * c;
  }
  // Below this a sum of squares or a difference is rounding, not data.
  const double tiny = 1e-12 * range;
  for (std::size_t k = min_segment; k + min_segment <= m; ++k) {
    const double n1 = static_cast<double>(k), n2 = static_cast<double>(m - k);
    const double ma = s1[k] / n1, mb = (s1[m] - s1[k]) / n2;
    const double ss = std::max(0.0, (s2[k] - n1 * ma * ma) + (s2[m] - s2[k] - n2 * mb * mb));
    const double diff = std::fabs(mb - ma);
    double t = 0;
    if (ss <= tiny * tiny * static_cast<double>(m)) t = diff > tiny ? std::numeric_limits<double>::infinity() : 0.0;
    else t = diff / (std::sqrt(ss / static_cast<double>(m - 2)) * std::sqrt(1.0 / n1 + 1.0 / n2));
    if (t > best.statistic) best = {k, t};
  }
  return best;
}

std::vector<double> clip_outliers(const std::vector<double>& values, double clip) {
  if (!(clip > 0) || values.size() < 3) return values;
  std::vector<double> diffs;
  diffs.reserve(values.size() - 1);
  for (std::size_t i = 0; i + 1 < values.size(); ++i) diffs.push_back(std::fabs(values[i + 1] - values[i]));
  const double sigma = common::median(std::move(diffs)) / (kMadPerSd * std::sqrt(2.0));
  if (!(sigma > 0)) return values;
  const double limit = clip * sigma;
  std::vector<double> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double med = running_median5(values, i);
    out[i] = med + std::clamp(values[i] - med, -limit, limit);
  }
  return out;
}

std::optional<SplitTest> test_split(const std::vector<double>& values, const ChangePointOptions& options) {
  const auto statistic = [&](const std::vector<double>& v) {
    return best_split(clip_outliers(v, options.clip), options.min_segment);
  };
  const auto observed = statistic(values);
  if (!observed) return std::nullopt;
  SplitTest out;
  out.split = *observed;
  // Enough permutations that p can fall below alpha with room to spare.
  const double wanted = options.alpha > 0 ? std::ceil(20.0 / options.alpha) - 1.0 : 0.0;
  out.permutations = std::max(options.permutations, static_cast<std::size_t>(std::min(wanted, 1e6)));
  // A permutation's maximum that equals the observed one but for rounding counts as reaching it.
  const double reach = observed->statistic * (1.0 - 1e-12);
  SplitMix64 rng(options.seed);
  std::vector<double> order = values;
  std::size_t at_least = 0;
  for (std::size_t b = 0; b < out.permutations; ++b) {
    for (std::size_t i = order.size() - 1; i > 0; --i) std::swap(order[i], order[rng.below(i + 1)]);
    if (statistic(order)->statistic >= reach) ++at_least;
  }
  out.p_value = static_cast<double>(1 + at_least) / static_cast<double>(1 + out.permutations);
  return out;
}

std::vector<ChangePoint> find_change_points(const std::vector<double>& values, const ChangePointOptions& options) {
  std::vector<ChangePoint> out;
  segment(values, 0, values.size(), options, out);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
  // Each step's size from the final segmentation: the medians of its neighbouring segments.
  for (std::size_t j = 0; j < out.size(); ++j) {
    const std::size_t from = j == 0 ? 0 : out[j - 1].index;
    const std::size_t to = j + 1 < out.size() ? out[j + 1].index : values.size();
    out[j].before = common::median({values.begin() + static_cast<std::ptrdiff_t>(from),
                                    values.begin() + static_cast<std::ptrdiff_t>(out[j].index)});
    out[j].after = common::median({values.begin() + static_cast<std::ptrdiff_t>(out[j].index),
                                   values.begin() + static_cast<std::ptrdiff_t>(to)});
  }
  return out;
}

}  // namespace chaosbench::reports

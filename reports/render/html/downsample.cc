#include "reports/render/html/downsample.h"

#include "common/values/percentile.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace chaosbench::reports::html {

std::size_t bucket_of(double t, double t0, double t1, std::size_t n) {
  if (n == 0) return 0;
  if (!(t1 > t0)) return 0;
  double f = (t - t0) / (t1 - t0) * static_cast<double>(n);
  if (!(f > 0)) return 0;
  return std::min(static_cast<std::size_t>(f), n - 1);
}

Line downsample_extremes(const std::vector<double>& t, const std::vector<double>& v, std::size_t max_points) {
  std::size_t size = std::min(t.size(), v.size());
  if (size <= max_points) return {{t.begin(), t.begin() + static_cast<std::ptrdiff_t>(size)},
                                  {v.begin(), v.begin() + static_cast<std::ptrdiff_t>(size)}};
  std::size_t buckets = std::max<std::size_t>(max_points / 2, 1);
  double t0 = t.front(), t1 = t.front();
  for (std::size_t i = 0; i < size; ++i) {
    t0 = std::min(t0, t[i]);
    t1 = std::max(t1, t[i]);
  }
  constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> lo(buckets, kNone), hi(buckets, kNone);
  for (std::size_t i = 0; i < size; ++i) {
    if (!std::isfinite(v[i])) continue;
    std::size_t b = bucket_of(t[i], t0, t1, buckets);
    if (lo[b] == kNone || v[i] < v[lo[b]]) lo[b] = i;
    if (hi[b] == kNone || v[i] > v[hi[b]]) hi[b] = i;
  }
  Line out;
  out.t.reserve(2 * buckets);
  out.v.reserve(2 * buckets);
  for (std::size_t b = 0; b < buckets; ++b) {
    if (lo[b] == kNone) continue;
    std::size_t first = std::min(lo[b], hi[b]), second = std::max(lo[b], hi[b]);
    out.t.push_back(t[first]);
    out.v.push_back(v[first]);
    if (second != first) {
      out.t.push_back(t[second]);
      out.v.push_back(v[second]);
    }
  }
  return out;
}

Pooled pool_median_max(const std::vector<const std::vector<double>*>& ts,
                       const std::vector<const std::vector<double>*>& vs, double t0, double t1, std::size_t n) {
  std::vector<std::vector<double>> buckets(n);
  for (std::size_t s = 0; s < ts.size() && s < vs.size(); ++s) {
    const auto& t = *ts[s];
    const auto& v = *vs[s];
    for (std::size_t i = 0; i < t.size() && i < v.size(); ++i)
      if (std::isfinite(v[i])) buckets[bucket_of(t[i], t0, t1, n)].push_back(v[i]);
  }
  Pooled out;
  double width = n > 0 ? (t1 - t0) / static_cast<double>(n) : 0;
  for (std::size_t b = 0; b < n; ++b) {
    if (buckets[b].empty()) continue;
    double centre = t0 + (static_cast<double>(b) + 0.5) * width;
    double max = *std::max_element(buckets[b].begin(), buckets[b].end());
    out.median.t.push_back(centre);
    out.median.v.push_back(common::median(std::move(buckets[b])));
    out.max.t.push_back(centre);
    out.max.v.push_back(max);
  }
  return out;
}

}  // namespace chaosbench::reports::html

// Reducing long series for display in report.html. A chart of 10^6 points is neither
// readable nor small, but an average hides the spike a fault caused, so buckets keep their
// extremes. Pure functions on plain vectors.
#pragma once

#include <cstddef>
#include <vector>

namespace chaosbench::reports::html {

struct Line {
  std::vector<double> t;
  std::vector<double> v;
};

// Index of the bucket holding t when [t0, t1] is cut into n equal buckets (clamped).
std::size_t bucket_of(double t, double t0, double t1, std::size_t n);

// At most max_points points (max_points >= 2): a shorter series is returned as it is; a
// longer one is cut into max_points / 2 equal time buckets, each keeping its minimum and
// maximum sample in time order. Non-finite values are dropped from reduced series.
Line downsample_extremes(const std::vector<double>& t, const std::vector<double>& v, std::size_t max_points);

// Several series pooled over n time buckets of [t0, t1]: per bucket, the median and the
// maximum of every sample that falls in it, at the bucket's centre. Empty buckets are skipped.
struct Pooled {
  Line median;
  Line max;
};
Pooled pool_median_max(const std::vector<const std::vector<double>*>& ts,
                       const std::vector<const std::vector<double>*>& vs, double t0, double t1, std::size_t n);

}  // namespace chaosbench::reports::html

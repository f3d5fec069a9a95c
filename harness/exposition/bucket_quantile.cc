// See bucket_quantile.h.
#include "harness/exposition/bucket_quantile.h"

#include <algorithm>
#include <cmath>

namespace chaosbench::harness::prometheus {

std::optional<double> bucket_quantile(double q, std::vector<std::pair<double, double>> buckets) {
  if (!(q >= 0 && q <= 1)) return std::nullopt;
  // A NaN bound or count has no order, and sorting it is undefined behaviour.
  std::erase_if(buckets, [](const auto& b) { return std::isnan(b.first) || std::isnan(b.second); });
  if (buckets.empty()) return std::nullopt;
  std::sort(buckets.begin(), buckets.end());
  if (!std::isinf(buckets.back().first) || buckets.back().first < 0) return std::nullopt;
  // Counts scraped at slightly different moments can dip: keep them monotonic.
  for (std::size_t i = 1; i < buckets.size(); ++i) buckets[i].second = std::max(buckets[i].second, buckets[i - 1].second);
  const double total = buckets.back().second;
  if (!(total > 0)) return std::nullopt;
  const double rank = q * total;
  std::size_t i = 0;
  while (i + 1 < buckets.size() && buckets[i].second < rank) ++i;
  if (std::isinf(buckets[i].first)) return buckets.size() >= 2 ? std::optional<double>(buckets[buckets.size() - 2].first) : std::nullopt;
  const double upper = buckets[i].first;
  double lower = i == 0 ? (upper > 0 ? 0.0 : upper) : buckets[i - 1].first;
  double below = i == 0 ? 0.0 : buckets[i - 1].second;
  const double in_bucket = buckets[i].second - below;
  if (!(in_bucket > 0)) return upper;
  return lower + (upper - lower) * (rank - below) / in_bucket;
}

}  // namespace chaosbench::harness::prometheus

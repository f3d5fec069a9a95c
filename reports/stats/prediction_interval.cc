#include "reports/stats/prediction_interval.h"

#include <cmath>

#include "reports/stats/student_t.h"

namespace chaosbench::reports {

bool log_scale_fits(const std::vector<double>& values, double current) {
  if (!(std::isfinite(current) && current > 0)) return false;
  for (double v : values)
    if (!(std::isfinite(v) && v > 0)) return false;
  return true;
}

std::optional<PredictionInterval> prediction_interval(const std::vector<double>& values, double confidence,
                                                      bool log_scale) {
  if (values.size() < 2 || !(confidence > 0 && confidence < 1)) return std::nullopt;
  std::vector<double> x;
  x.reserve(values.size());
  for (double v : values) {
    if (!std::isfinite(v) || (log_scale && !(v > 0))) return std::nullopt;
    x.push_back(log_scale ? std::log(v) : v);
  }
  PredictionInterval pi;
  pi.n = x.size();
  pi.log_scale = log_scale;
  const double n = static_cast<double>(x.size());
  for (double v : x) pi.mean += v;
  pi.mean /= n;
  double ss = 0;
  for (double v : x) ss += (v - pi.mean) * (v - pi.mean);
  pi.sd = std::sqrt(ss / (n - 1.0));
  pi.t_quantile = student_t_quantile((1.0 + confidence) / 2.0, n - 1.0);
  const double half = pi.t_quantile * pi.sd * std::sqrt(1.0 + 1.0 / n);
  pi.center = log_scale ? std::exp(pi.mean) : pi.mean;
  pi.low = log_scale ? std::exp(pi.mean - half) : pi.mean - half;
  pi.high = log_scale ? std::exp(pi.mean + half) : pi.mean + half;
  return pi;
}

}  // namespace chaosbench::reports

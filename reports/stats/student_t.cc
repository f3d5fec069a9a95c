#include "reports/stats/student_t.h"

#include <cmath>
#include <limits>

namespace chaosbench::reports {
namespace {

// The continued fraction of I_x(a, b) (A&S 26.5.8) by the modified Lentz method:
// 1 / (1 + d1 / (1 + d2 / (1 + ...))) with d_{2m+1} = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1))
// and d_{2m} = m (b - m) x / ((a + 2m - 1)(a + 2m)). Converges fast for x < (a + 1) / (a + b + 2).
double beta_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  constexpr double kEps = 1e-16;
  double c = 1.0;
  double d = 1.0 - (a + b) * x / (a + 1.0);
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1.0 / d;
  double f = d;
  for (int m = 1; m <= 10000; ++m) {
    const double m2 = 2.0 * m;
    double num = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));  // even step
    d = 1.0 + num * d;
    c = 1.0 + num / c;
    if (std::fabs(d) < kTiny) d = kTiny;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    f *= d * c;
    num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));  // odd step
    d = 1.0 + num * d;
    c = 1.0 + num / c;
    if (std::fabs(d) < kTiny) d = kTiny;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    const double step = d * c;
    f *= step;
    if (std::fabs(step - 1.0) < kEps) break;
  }
  return f;
}

}  // namespace

double incomplete_beta(double a, double b, double x) {
  if (!(x > 0)) return 0.0;
  if (!(x < 1)) return 1.0;
  // x^a (1 - x)^b / (a B(a, b)), in logs.
  const double log_front = std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  if (x < (a + 1.0) / (a + b + 2.0)) return std::exp(log_front) * beta_fraction(a, b, x) / a;
  return 1.0 - std::exp(log_front) * beta_fraction(b, a, 1.0 - x) / b;
}

double student_t_cdf(double t, double df) {
  if (std::isnan(t) || !(df > 0)) return std::numeric_limits<double>::quiet_NaN();
  if (std::isinf(t)) return t > 0 ? 1.0 : 0.0;
  const double tail = 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t));  // P(T > |t|)
  return t >= 0 ? 1.0 - tail : tail;
}

double student_t_quantile(double p, double df) {
  if (!(p > 0 && p < 1) || !(df > 0)) return std::numeric_limits<double>::quiet_NaN();
  if (p == 0.5) return 0.0;
  // Symmetric: solve for the upper tail q = min(p, 1 - p) on t >= 0, where the tail
  // P(T > t) = I_x(df/2, 1/2) / 2 falls from 1/2 to 0; bracket, then bisect.
  const double q = p < 0.5 ? p : 1.0 - p;
  auto upper = [&](double t) { return 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t)); };
  double lo = 0.0, hi = 1.0;
  while (upper(hi) > q && hi < 1e300) {
    lo = hi;
    hi *= 2.0;
  }
  for (int i = 0; i < 2000 && hi - lo > 1e-13 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (upper(mid) > q ? lo : hi) = mid;
  }
  const double t = 0.5 * (lo + hi);
  return p < 0.5 ? -t : t;
}

std::optional<WelchResult> welch_t_test(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() < 2 || b.size() < 2) return std::nullopt;
  auto moments = [](const std::vector<double>& v) {
    double mean = 0;
    for (double x : v) mean += x;
    mean /= static_cast<double>(v.size());
    double ss = 0;
    for (double x : v) ss += (x - mean) * (x - mean);
    return std::pair{mean, ss / static_cast<double>(v.size() - 1)};
  };
  const auto [ma, va] = moments(a);
  const auto [mb, vb] = moments(b);
  const double na = static_cast<double>(a.size()), nb = static_cast<double>(b.size());
  WelchResult r;
  r.difference = mb - ma;
  const double sa = va / na, sb = vb / nb;
  r.se = std::sqrt(sa + sb);
  if (r.se == 0) {
    r.df = na + nb - 2.0;
    r.t = r.difference == 0 ? 0.0 : std::copysign(std::numeric_limits<double>::infinity(), r.difference);
    r.p_value = r.difference == 0 ? 1.0 : 0.0;
    return r;
  }
  r.df = (sa + sb) * (sa + sb) / (sa * sa / (na - 1.0) + sb * sb / (nb - 1.0));
  r.t = r.difference / r.se;
  // Two-sided p straight from the tail (no 1 - cdf cancellation for tiny p).
  r.p_value = incomplete_beta(r.df / 2.0, 0.5, r.df / (r.df + r.t * r.t));
  return r;
}

TInterval welch_interval(const WelchResult& w, double confidence) {
  const double half = student_t_quantile((1.0 + confidence) / 2.0, w.df) * w.se;
  return {w.difference - half, w.difference + half};
}

}  // namespace chaosbench::reports

// Student's t distribution and Welch's two-sample t test: what the run-level gate
// (gate.h, over repeated runs) and the history gate's prediction interval rest on. Pure
// functions of their arguments, thread-safe.
//
// The distribution function comes from the regularized incomplete beta function:
// for t >= 0, P(T <= t) = 1 - I_x(df/2, 1/2) / 2 with x = df / (df + t^2) (Abramowitz &
// Stegun 26.7.1 and 26.5.27); I_x is evaluated by its continued fraction (A&S 26.5.8),
// with the symmetry I_x(a, b) = 1 - I_{1-x}(b, a) where the fraction converges slowly.
// The quantile inverts the distribution function by bisection. Checked against SciPy's
// scipy.stats.t and ttest_ind(equal_var=False) (tests/reports/student_t_test.cc, tests/reports/repeat_gate_test.cc;
// the history gate's quantiles through the CLI in tests/history/scipy_check.py).
#pragma once

#include <optional>
#include <vector>

namespace chaosbench::reports {

// I_x(a, b) for a, b > 0 and x in [0, 1].
double incomplete_beta(double a, double b, double x);

// P(T <= t) for T ~ Student's t with df > 0 degrees of freedom (df need not be whole:
// Welch's df is not). +-infinity give 1 and 0.
double student_t_cdf(double t, double df);

// The t with P(T <= t) = p, for p in (0, 1): accurate to about 1e-12 relative.
double student_t_quantile(double p, double df);

// Welch's unequal-variance t test of the difference of means, mean(b) - mean(a).
struct WelchResult {
  double difference = 0;  // mean(b) - mean(a)
  double se = 0;          // its standard error, sqrt(var_a / n_a + var_b / n_b)
  double t = 0;           // difference / se (+-infinity when se is 0 and the means differ)
  double df = 0;          // Welch-Satterthwaite degrees of freedom
  double p_value = 1;     // two-sided
};

// nullopt when a side has fewer than 2 values (no variance to estimate). Sample
// variances with n - 1. Both sides constant: se 0, df n_a + n_b - 2, p 1 when the means
// are equal and 0 when they differ (a deterministic difference).
std::optional<WelchResult> welch_t_test(const std::vector<double>& a, const std::vector<double>& b);

// The two-sided confidence interval of the difference at `confidence` (e.g. 0.99):
// difference -+ t_{(1 + confidence) / 2, df} * se.
struct TInterval {
  double low = 0, high = 0;
};
TInterval welch_interval(const WelchResult& w, double confidence);

}  // namespace chaosbench::reports

// Student's t and Welch's test (reports/stats/student_t.h) against reference values printed
// by SciPy 1.10.1 (Debian python3-scipy): scipy.stats.t.cdf / t.ppf, scipy.stats.beta.cdf
// and scipy.stats.ttest_ind(b, a, equal_var=False). One exception: SciPy's t.ppf(0.999999, 3)
// is 103.29946802 and 2.3e-9 off; the value below solves the closed form for 3 degrees of
// freedom, F(t) = 1/2 + (u / (1 + u^2) + atan u) / pi with u = t / sqrt 3, at 40 digits.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "reports/stats/student_t.h"

namespace student_t_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::reports;

namespace {
bool close(double x, double ref, double rel) { return std::fabs(x - ref) <= rel * std::fabs(ref); }
}  // namespace

TEST_CASE("student t: the distribution function matches SciPy", "[student-t]") {
  struct Case {
    double t, df, cdf;
  };
  for (const auto& c : {Case{0.5, 1, 0.6475836176504333}, Case{-2.0, 3, 0.06966298427942155},
                        Case{2.5, 7.3, 0.9801748826671998}, Case{10, 2, 0.9950737714883371},
                        Case{-40, 30, 6.863022597203181e-28}, Case{1.96, 1e6, 0.9750019662073651}}) {
    INFO("t " << c.t << " df " << c.df);
    CHECK(close(student_t_cdf(c.t, c.df), c.cdf, 1e-10));
  }
  CHECK(student_t_cdf(0, 5) == 0.5);
  CHECK(student_t_cdf(std::numeric_limits<double>::infinity(), 5) == 1.0);
  CHECK(std::isnan(student_t_cdf(1, 0)));
  CHECK(close(incomplete_beta(2.5, 0.5, 0.3), 0.018927124071945658, 1e-10));
  CHECK(close(incomplete_beta(0.5, 7, 0.97), 0.9999999999953575, 1e-12));
}

TEST_CASE("student t: the quantile matches SciPy and inverts the distribution function", "[student-t]") {
  struct Case {
    double p, df, t;
  };
  for (const auto& c : {Case{0.995, 8, 3.3553873313333957}, Case{0.975, 4.5, 2.6589123472044034},
                        Case{0.9, 1, 3.0776835372078066}, Case{0.005, 20, -2.845339709776814},
                        Case{0.999999, 3, 103.29946777943042}}) {
    INFO("p " << c.p << " df " << c.df);
    CHECK(close(student_t_quantile(c.p, c.df), c.t, 1e-9));
    CHECK(close(student_t_cdf(student_t_quantile(c.p, c.df), c.df), c.p, 1e-9));
  }
  CHECK(student_t_quantile(0.5, 3) == 0.0);
  CHECK(std::isnan(student_t_quantile(1.0, 3)));
}

TEST_CASE("student t: Welch's test matches SciPy's ttest_ind(equal_var=False)", "[student-t]") {
  auto w = welch_t_test({6.35, 6.36, 6.45, 6.41, 6.42}, {7.01, 7.12, 6.98, 7.20, 7.05});
  REQUIRE(w);
  CHECK(close(w->t, 15.349929379323113, 1e-10));
  CHECK(close(w->p_value, 7.323620889084036e-06, 1e-8));
  w = welch_t_test({1, 2, 3, 4}, {2, 9, 4.5});
  REQUIRE(w);
  CHECK(close(w->t, 1.2418408411301325, 1e-10));
  CHECK(close(w->p_value, 0.32181391756679223, 1e-9));
  // The interval at the p-value's confidence just touches 0.
  const auto ci = welch_interval(*w, 1 - w->p_value);
  CHECK(std::fabs(ci.low) < 1e-6);
}

TEST_CASE("student t: Welch's test on thin or constant samples", "[student-t]") {
  CHECK_FALSE(welch_t_test({1.0}, {1.0, 2.0}));
  auto same = welch_t_test({3, 3, 3}, {3, 3});
  REQUIRE(same);
  CHECK(same->p_value == 1.0);
  auto apart = welch_t_test({3, 3, 3}, {4, 4});
  REQUIRE(apart);
  CHECK(apart->p_value == 0.0);
  CHECK(std::isinf(apart->t));
}

}  // namespace student_t_test

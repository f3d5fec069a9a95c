#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "common/values/percentile.h"

namespace percentile_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::common;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Case {
  double p;
  double expected;
};

// Every expected value below is what numpy 1.24's np.percentile(values, p) printed (its
// default method "linear"); they are compared bit for bit, since the interpolation is
// computed as numpy computes it. A few by hand, h = (n - 1) p / 100:
//   {15, 20, 35, 40, 50}, p 40: h = 1.6, 20 + 0.6 (35 - 20) = 29
//   {15, 20, 35, 40, 50}, p 99: h = 3.96, 40 + 0.96 (50 - 40) = 49.6
//   {1, 1, 2, 3, 4, 5, 6, 9}, p 25: h = 1.75, 1 + 0.75 (2 - 1) = 1.75
//   {1, 1, 2, 3, 4, 5, 6, 9}, p 50: h = 3.5, 3 + 0.5 (4 - 3) = 3.5 (the mean of the middle two)
void check_all(const std::vector<double>& values, const std::vector<Case>& cases) {
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  for (const auto& c : cases) {
    INFO("p " << c.p);
    CHECK(percentile(values, c.p) == c.expected);
    CHECK(percentile_sorted(sorted, c.p) == c.expected);
    CHECK(percentile_of(sorted.size(), c.p, [&](std::size_t k) { return sorted[k]; }) == c.expected);
  }
}

TEST_CASE("percentile: numpy's linear definition, bit for bit", "[percentile]") {
  check_all({15, 20, 35, 40, 50}, {{0, 15.0}, {2.5, 15.5}, {25, 20.0}, {40, 29.0}, {50, 35.0}, {90, 46.0},
                                   {97.5, 49.0}, {99, 49.6}, {99.9, 49.96000000000001}, {100, 50.0}});
  check_all({3, 1, 4, 1, 5, 9, 2, 6}, {{0, 1.0}, {2.5, 1.0}, {25, 1.75}, {40, 2.8000000000000003}, {50, 3.5},
                                       {90, 6.8999999999999995}, {97.5, 8.475000000000001}, {99, 8.79},
                                       {99.9, 8.979000000000001}, {100, 9.0}});
  check_all({0.1, 0.7, 0.2}, {{0, 0.1}, {2.5, 0.10500000000000001}, {25, 0.15000000000000002},
                              {40, 0.18000000000000002}, {50, 0.2}, {90, 0.6}, {97.5, 0.6749999999999999},
                              {99, 0.69}, {99.9, 0.6990000000000001}, {100, 0.7}});
  check_all({2.5, -1.0}, {{0, -1.0}, {2.5, -0.9125}, {25, -0.125}, {40, 0.40000000000000013}, {50, 0.75},
                          {90, 2.15}, {97.5, 2.4125}, {99, 2.465}, {99.9, 2.4965}, {100, 2.5}});
  check_all({7}, {{0, 7}, {50, 7}, {99.9, 7}, {100, 7}});
  std::vector<double> hundred;
  for (int i = 1; i <= 100; ++i) hundred.push_back(i);
  // Not nearest rank (which gives 99 and 90): 1 + 0.99 * 99 and 1 + 0.9 * 99.
  check_all(hundred, {{99, 99.01}, {90, 90.10000000000001}, {50, 50.5}});
}

TEST_CASE("percentile: the median is the mean of the middle two of an even count", "[percentile]") {
  CHECK(median({4, 1, 3, 2}) == 2.5);
  CHECK(median({4, 1, 3}) == 3);
  CHECK(std::isnan(median({})));
}

TEST_CASE("percentile: floats sorted in place give the same as doubles", "[percentile]") {
  const std::vector<float> f{1.5F, 2.0F, 4.25F, 8.0F};
  CHECK(percentile_sorted(f, 50) == 3.125);  // h = 1.5: 2 + 0.5 * 2.25
  CHECK(percentile_sorted(f, 99.9) == percentile_sorted(std::vector<double>{1.5, 2.0, 4.25, 8.0}, 99.9));
}

TEST_CASE("percentile: no values, NaN and p outside [0, 100] have no percentile", "[percentile]") {
  CHECK(std::isnan(percentile({}, 50)));
  CHECK(std::isnan(percentile_sorted(std::vector<double>{}, 50)));
  CHECK(std::isnan(percentile_sorted(std::vector<float>{}, 0)));
  // Out of range is NaN, not clamped: percentile 150 is a mistake, not the maximum.
  for (double p : {-0.1, 100.1, -kInf, kInf, kNaN}) {
    INFO("p " << p);
    CHECK(std::isnan(percentile({1, 2, 3}, p)));
    CHECK(std::isnan(percentile_sorted(std::vector<double>{1, 2, 3}, p)));
    CHECK(std::isnan(percentile_index(3, p)));
  }
  // A NaN value anywhere makes the whole percentile NaN, as numpy's does.
  CHECK(std::isnan(percentile({1, kNaN, 3}, 0)));
  CHECK(std::isnan(percentile({kNaN}, 50)));
  CHECK(std::isnan(percentile_index(0, 50)));
  CHECK(percentile_index(5, 40) == 1.6);
}

TEST_CASE("percentile: infinite values give the limit of the interpolation", "[percentile]") {
  CHECK(percentile({1, kInf}, 50) == kInf);
  CHECK(percentile({-kInf, 1}, 50) == -kInf);
  CHECK(percentile({kInf, kInf}, 50) == kInf);
  CHECK(percentile({-kInf, 0, kInf}, 0) == -kInf);
  CHECK(percentile({-kInf, 0, kInf}, 50) == 0);
  CHECK(std::isnan(percentile({-kInf, kInf}, 50)));
  // Huge finite ends do not overflow: numpy's 8.988465724311579e+307.
  CHECK(percentile({1e300, 1.7976931348623157e308}, 50) == 8.988465724311579e+307);
}

TEST_CASE("percentile: order statistics through a function are asked for in increasing order", "[percentile]") {
  std::vector<std::size_t> asked;
  const double p = percentile_of(5, 40, [&](std::size_t k) {
    asked.push_back(k);
    return static_cast<double>(k * 10);
  });
  CHECK(p == 16.0);  // h = 1.6 between 10 and 20
  CHECK(asked == std::vector<std::size_t>{1, 2});
  asked.clear();
  CHECK(percentile_of(5, 50, [&](std::size_t k) {
          asked.push_back(k);
          return static_cast<double>(k);
        }) == 2.0);
  CHECK(asked == std::vector<std::size_t>{2});  // h whole: one order statistic
}

}  // namespace percentile_test

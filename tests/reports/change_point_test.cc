// The history gate's statistics (reports/stats/change_point.h, reports/stats/prediction_interval.h)
// on synthetic run-by-run histories: lognormal run-to-run noise of 2 % (what a quiet CI
// runner gives between runs of one build; 3 % where said), a 10 % step, A/A histories,
// outliers, several steps, and the interval against SciPy's t quantiles. What the gate
// promises (docs/history.md): the step found at its index in a 60-run history, no step in 20 A/A ones
// (at most 1 false positive). tests/history/scipy_check.py checks the same through the CLI.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "reports/stats/change_point.h"
#include "reports/stats/prediction_interval.h"

namespace change_point_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::reports;

namespace {

// Log values of n runs around 100 with lognormal noise `sigma`, multiplied by 1 + step
// from index `at` on.
std::vector<double> history(std::uint64_t seed, std::size_t n, double sigma, std::size_t at = 0, double step = 0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, sigma);
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = std::log(100.0) + normal(rng) + (i >= at ? std::log1p(step) : 0.0);
  return v;
}

}  // namespace

TEST_CASE("history change point: a clean step is found at its index", "[history]") {
  const std::vector<double> v{1, 1, 1, 1, 5, 5, 5};
  const auto split = best_split(v, 2);
  REQUIRE(split);
  CHECK(split->index == 4);
  CHECK(std::isinf(split->statistic));
  CHECK(best_split({1, 2, 3}, 2) == std::nullopt);
  CHECK(best_split({2, 2, 2, 2}, 2)->statistic == 0.0);
  // Eight and eight: a random order separates them this well with probability 2 / C(16, 8).
  const auto steps =
      find_change_points({1, 1.01, 0.99, 1, 1.02, 1, 0.98, 1.01, 2, 2.01, 1.99, 2, 2.02, 2, 1.98, 2.01}, {});
  REQUIRE(steps.size() == 1);
  CHECK(steps[0].index == 8);
  CHECK(steps[0].before == Approx(1.0));
  CHECK(steps[0].after == Approx(2.0));
}

TEST_CASE("history change point: the pooled t at a split is Student's two-sample t (SciPy ttest_ind equal_var=True)",
          "[history]") {
  // scipy.stats.ttest_ind([4.6, 4.4, 4.5], [3.9, 4.1, 4.0, 4.2, 3.8], equal_var=True).statistic
  // = 4.841229182759273, the largest of the splits at 2..6 (SciPy 1.10.1).
  const auto split = best_split({3.9, 4.1, 4.0, 4.2, 3.8, 4.6, 4.4, 4.5}, 2);
  REQUIRE(split);
  CHECK(split->index == 5);
  CHECK(split->statistic == Approx(4.841229182759273).epsilon(1e-12));
}

TEST_CASE("history change point: the 10% step of a 60-run history is found at its index", "[history]") {
  // The acceptance: one history (seed 21), and the rate over 100 seeds.
  const auto steps = find_change_points(history(21, 60, 0.02, 37, 0.10), {});
  REQUIRE(steps.size() == 1);
  CHECK(steps[0].index == 37);
  CHECK(steps[0].p_value < 0.01);
  CHECK(std::exp(steps[0].after - steps[0].before) - 1 == Approx(0.10).margin(0.02));
  int exact = 0, exact_3pct = 0;
  for (std::uint64_t seed = 1000; seed < 1100; ++seed) {
    const auto s = find_change_points(history(seed, 60, 0.02, 37, 0.10), {});
    exact += s.size() == 1 && s[0].index == 37;
    const auto s3 = find_change_points(history(seed, 60, 0.03, 37, 0.10), {});
    exact_3pct += s3.size() == 1 && s3[0].index == 37;
  }
  INFO("exact at 2% noise: " << exact << " of 100; at 3%: " << exact_3pct << " of 100");
  WARN("10% step in 60 runs found alone at its index: " << exact << " of 100 at 2% noise, " << exact_3pct
                                                         << " of 100 at 3%");
  CHECK(exact >= 95);
  CHECK(exact_3pct >= 75);
}

TEST_CASE("history change point: no step in 20 A/A histories of 60 runs", "[history]") {
  // The statistic, the clipping and the permutation test are all scale-free, so on log
  // values an A/A history's answer does not depend on the noise level: 2% stands for all.
  int false_positives = 0;
  for (std::uint64_t seed = 2000; seed < 2020; ++seed)
    false_positives += !find_change_points(history(seed, 60, 0.02), {}).empty();
  WARN("A/A histories of 60 runs with a step: " << false_positives << " of 20");
  CHECK(false_positives <= 1);
}

TEST_CASE("history change point: the false-positive rate is alpha whatever the noise", "[history]") {
  // 200 A/A windows of 31 (30 runs and the current): the permutation test's rate is alpha
  // (0.01) in expectation; 6 or more of 200 would be a 1-in-60 event at that rate.
  int found = 0;
  for (std::uint64_t seed = 3000; seed < 3200; ++seed)
    found += !find_change_points(history(seed, 31, 0.03), {}).empty();
  CHECK(found <= 5);
}

TEST_CASE("history change point: a step three runs before the end of a window is found", "[history]") {
  int found = 0;
  for (std::uint64_t seed = 4000; seed < 4050; ++seed) {
    const auto s = find_change_points(history(seed, 31, 0.02, 28, 0.10), {});
    found += !s.empty() && s.back().index == 28;
  }
  CHECK(found >= 40);
}

TEST_CASE("history change point: a lone outlier is no step and does not hide one", "[history]") {
  auto v = history(5, 31, 0.02);
  v[15] += std::log(1.4);  // one run 40% slow
  CHECK(find_change_points(v, {}).empty());
  int found = 0;
  for (std::uint64_t seed = 5000; seed < 5050; ++seed) {
    auto w = history(seed, 31, 0.02, 24, 0.10);
    w[10] += std::log(1.4);
    const auto s = find_change_points(w, {});
    found += !s.empty() && s.back().index == 24;
  }
  CHECK(found >= 40);
  // Without clipping the outlier inflates the pooled variance and hides most of them.
  ChangePointOptions raw;
  raw.clip = 0;
  int found_raw = 0;
  for (std::uint64_t seed = 5000; seed < 5050; ++seed) {
    auto w = history(seed, 31, 0.02, 24, 0.10);
    w[10] += std::log(1.4);
    const auto s = find_change_points(w, raw);
    found_raw += !s.empty() && s.back().index == 24;
  }
  CHECK(found_raw < found);
}

TEST_CASE("history change point: binary segmentation finds a regression and its fix", "[history]") {
  auto v = history(6, 60, 0.02, 20, 0.10);
  for (std::size_t i = 40; i < v.size(); ++i) v[i] -= std::log1p(0.10);
  const auto steps = find_change_points(v, {});
  // The index of a 10% step in 2% noise is exact most of the time, and within one run
  // nearly always (the test of the 60-run acceptance above counts).
  REQUIRE(steps.size() == 2);
  CHECK(std::labs(static_cast<long>(steps[0].index) - 20) <= 1);
  CHECK(std::labs(static_cast<long>(steps[1].index) - 40) <= 1);
  CHECK(steps[0].after > steps[0].before);
  CHECK(steps[1].after < steps[1].before);
}

TEST_CASE("history change point: the permutation test is deterministic and its p-value is in range", "[history]") {
  const auto v = history(7, 31, 0.02, 20, 0.05);
  ChangePointOptions o;
  const auto a = test_split(v, o);
  const auto b = test_split(v, o);
  REQUIRE(a);
  CHECK(a->p_value == b->p_value);
  CHECK(a->permutations == 1999);
  CHECK(a->p_value >= 1.0 / 2000);
  CHECK(a->p_value <= 1.0);
  o.alpha = 0.001;  // enough permutations that p can reach it
  CHECK(test_split(v, o)->permutations == 19999);
  CHECK(test_split({1, 2, 3}, o) == std::nullopt);
}

TEST_CASE("history change point: clipping pulls a lone outlier towards its neighbours' median", "[history]") {
  const std::vector<double> v{1.0, 1.02, 0.99, 1.01, 3.0, 1.0, 0.98, 1.01, 1.0};
  const auto c = clip_outliers(v, 2.5);
  CHECK(c[4] < 1.2);
  CHECK(c[0] == v[0]);
  CHECK(clip_outliers(v, 0) == v);
  CHECK(clip_outliers({5, 5, 5, 5}, 2.5) == std::vector<double>{5, 5, 5, 5});
}

TEST_CASE("history prediction interval: Student's t with sd * sqrt(1 + 1/n), checked against SciPy", "[history]") {
  // scipy.stats.t.ppf(0.995, 4) = 4.604094871415897
  const std::vector<double> v{10, 12, 11, 13, 12};
  const auto pi = prediction_interval(v, 0.99, false);
  REQUIRE(pi);
  const double sd = std::sqrt(((10 - 11.6) * (10 - 11.6) + 2 * (12 - 11.6) * (12 - 11.6) + (11 - 11.6) * (11 - 11.6) +
                               (13 - 11.6) * (13 - 11.6)) /
                              4);
  CHECK(pi->t_quantile == Approx(4.604094871415897).epsilon(1e-10));
  CHECK(pi->sd == Approx(sd));
  CHECK(pi->low == Approx(11.6 - 4.604094871415897 * sd * std::sqrt(1.2)).epsilon(1e-10));
  CHECK(pi->high == Approx(11.6 + 4.604094871415897 * sd * std::sqrt(1.2)).epsilon(1e-10));
  // On the log scale: the geometric mean, bounds symmetric in ratio.
  const auto lg = prediction_interval(v, 0.99, true);
  REQUIRE(lg);
  CHECK(lg->center * lg->center == Approx(lg->low * lg->high));
  CHECK(lg->center == Approx(std::exp((std::log(10.0) + 2 * std::log(12.0) + std::log(11.0) + std::log(13.0)) / 5)));
  CHECK(prediction_interval({1}, 0.99, false) == std::nullopt);
  CHECK(prediction_interval({1, -1}, 0.99, true) == std::nullopt);
  CHECK_FALSE(log_scale_fits({1, 2}, 0));
  CHECK(log_scale_fits({1, 2}, 3));
}

}  // namespace change_point_test

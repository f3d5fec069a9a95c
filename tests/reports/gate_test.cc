// The baseline gate (reports/gate/gate.h) and its statistics (reports/stats/statistics.h) on
// synthetic runs: seeded lognormal noise of 10% (this machine's run-to-run jitter), A/A
// false alarms, real regressions, tolerances, thin data, and reference p-values.
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "common/values/percentile.h"
#include "reports/gate/gate.h"
#include "reports/stats/statistics.h"

namespace gate_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

namespace {

using chaosbench::reports::Comparison;
using chaosbench::reports::compare_runs;
using chaosbench::reports::GateOptions;
using chaosbench::reports::GateStatus;
using chaosbench::reports::Labels;
using chaosbench::reports::MetricComparison;
using chaosbench::reports::MetricRecord;
using chaosbench::reports::RunResult;
using chaosbench::reports::Series;

// Values with median `median` and a lognormal jitter of sigma (0.1: about 10%).
std::vector<double> draw(std::uint64_t seed, std::size_t n, double median = 100.0, double sigma = 0.1) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, sigma);
  std::vector<double> v(n);
  for (auto& x : v) x = median * std::exp(normal(rng));
  return v;
}

// A run whose metric `name` has one series per rank (t = 0.01 s per sample) and a record
// for phase "overall"; `extra` records (single values, no series) are added as given.
struct RunSpec {
  std::string name = "train/step_time";
  std::string unit = "ms";
  std::string better = "lower";
  std::vector<std::vector<double>> ranks;
  std::string scenario_json = "{}";
};

MetricRecord record(const std::string& name, const std::string& unit, const std::string& better, Labels labels,
                    double value = 0) {
  MetricRecord r;
  r.name = name;
  r.unit = unit;
  r.better = chaosbench::common::parse_better(better);
  r.labels = std::move(labels);
  r.value = value;
  return r;
}

RunResult make_run(const RunSpec& spec) {
  RunResult run;
  run.run_id = "run";
  set_scenario(run, spec.scenario_json);
  double end = 0;
  for (std::size_t r = 0; r < spec.ranks.size(); ++r) {
    Series s;
    s.name = spec.name;
    s.unit = spec.unit;
    s.labels = {{"rank", static_cast<std::int64_t>(r)}};
    for (std::size_t i = 0; i < spec.ranks[r].size(); ++i) {
      s.t.push_back(0.01 * static_cast<double>(i));
      s.v.push_back(spec.ranks[r][i]);
    }
    end = std::max(end, 0.01 * static_cast<double>(spec.ranks[r].size()));
    run.series.push_back(std::move(s));
  }
  run.phases.push_back({"baseline", 0.0, end});
  run.metrics.push_back(record(spec.name, spec.unit, spec.better, {{"phase", std::string("overall")}}));
  return run;
}

// `ranks` series of `per_rank` draws each, from seeds seed, seed + 1, ...
std::vector<std::vector<double>> draws(std::uint64_t seed, std::size_t ranks, std::size_t per_rank,
                                       double median = 100.0) {
  std::vector<std::vector<double>> out;
  for (std::size_t r = 0; r < ranks; ++r) out.push_back(draw(seed * 1000 + r, per_rank, median));
  return out;
}

template <class F>
std::vector<std::vector<double>> transformed(std::vector<std::vector<double>> ranks, F f) {
  for (auto& r : ranks)
    for (auto& x : r) x = f(x);
  return ranks;
}

const MetricComparison& row(const Comparison& c, const std::string& stat, const std::string& name = "train/step_time") {
  for (const auto& m : c.metrics)
    if (m.stat == stat && m.name == name) return m;
  FAIL("no " << name << " " << stat << " row");
  throw std::logic_error("unreachable");
}

Comparison compare(const RunSpec& base, const RunSpec& cur, const GateOptions& options = {}) {
  return compare_runs(make_run(base), make_run(cur), options);
}

}  // namespace

TEST_CASE("the upper tail is every value at or above the percentile, ties included", "[gate]") {
  using chaosbench::reports::upper_tail;
  std::vector<double> hundred;
  for (int i = 100; i >= 1; --i) hundred.push_back(i);
  auto tail = upper_tail(hundred, 90);  // the p90 of 1 .. 100 is 90.1
  REQUIRE(tail.size() == 10);           // 91 .. 100, ascending
  CHECK(tail.front() == 91);
  CHECK(tail.back() == 100);
  CHECK(upper_tail({3, 2, 1, 2, 2}, 50) == std::vector<double>{2, 2, 2, 3});  // p50 is 2: all three 2s
  CHECK(upper_tail({7}, 99) == std::vector<double>{7});
  CHECK(upper_tail({}, 90).empty());
}

TEST_CASE("the median of a sorted sample without one of its values", "[gate]") {
  using chaosbench::reports::median_sorted_without;
  const std::vector<double> v{1, 2, 3, 4, 10};
  CHECK(median_sorted_without(v, 4) == 2.5);  // {1, 2, 3, 4}
  CHECK(median_sorted_without(v, 0) == 3.5);  // {2, 3, 4, 10}
  CHECK(median_sorted_without(v, 9) == 3);    // nothing left out
  CHECK(std::isnan(median_sorted_without({5}, 0)));
}

TEST_CASE("Mann-Whitney U p-values match reference values", "[gate]") {
  using chaosbench::reports::mann_whitney_u;
  // Exact distribution (no ties, small n); references by enumerating every arrangement.
  auto r = mann_whitney_u({1, 3, 5}, {2, 4, 6});
  CHECK(r.exact);
  CHECK(r.u == 3);
  CHECK(r.p_value == Approx(0.7).margin(1e-12));
  CHECK(mann_whitney_u({1, 2, 3}, {4, 5, 6}).p_value == Approx(0.1).margin(1e-12));
  CHECK(mann_whitney_u({1, 2, 3, 4}, {5, 6, 7, 8}).p_value == Approx(2.0 / 70).margin(1e-12));
  CHECK(mann_whitney_u({1.1, 2.5, 3.7, 9.0, 4.2}, {5.5, 6.1, 7.3, 8.8, 10.2, 11.0}).p_value ==
        Approx(0.05194805194805195).margin(1e-12));
  r = mann_whitney_u({3.1, 0.2, 7.7, 5.4, 1.9, 8.8, 2.6}, {4.4, 6.6, 9.9, 10.1, 12.5, 3.3, 11.1, 13.7});
  CHECK(r.u == 8);
  CHECK(r.p_value == Approx(0.020512820512820513).margin(1e-12));
  // Symmetric in its arguments.
  CHECK(mann_whitney_u({2, 4, 6}, {1, 3, 5}).p_value == Approx(0.7).margin(1e-12));

  // Normal approximation with tie and continuity corrections; references from the
  // formulas evaluated independently (pair counting for U, erfc for the tail).
  std::vector<double> a, b;
  for (int i = 0; i < 25; ++i) a.push_back(i % 7);
  for (int i = 0; i < 30; ++i) b.push_back(i % 7 + 1);
  r = mann_whitney_u(a, b);
  CHECK_FALSE(r.exact);
  CHECK(r.u == 268);
  CHECK(r.p_value == Approx(0.06921137236164954).epsilon(1e-9));
  a.clear();
  b.clear();
  for (int i = 0; i < 60; ++i) {
    a.push_back(0.5 * i);
    b.push_back(0.5 * i + 3);
  }
  r = mann_whitney_u(a, b);
  CHECK_FALSE(r.exact);  // ties (a and b share values)
  CHECK(r.u == 1458);
  CHECK(r.p_value == Approx(0.07304039035575541).epsilon(1e-9));
  a.clear();
  b.clear();
  for (int i = 0; i < 30; ++i) {
    a.push_back(i + 0.25);
    b.push_back(i + 30.5);
  }
  // No ties, n = 30: exact, 2 / C(60, 30).
  r = mann_whitney_u(a, b);
  CHECK(r.exact);
  CHECK(r.p_value == Approx(2.0 / 1.1826458156486e17).epsilon(1e-6));
  // Identical samples: nothing to tell apart.
  CHECK(mann_whitney_u({1, 1, 1}, {1, 1, 1, 1}).p_value == 1.0);
  CHECK(mann_whitney_u({}, {1, 2}).p_value == 1.0);
}

TEST_CASE("exact and approximate Mann-Whitney agree where both apply", "[gate]") {
  using chaosbench::reports::mann_whitney_u;
  // 50 vs 50 (exact) against 51 vs 50 (normal) on nearly the same data.
  auto a = draw(7, 51);
  auto b = draw(8, 50, 105.0);
  auto exact = mann_whitney_u({a.begin(), a.begin() + 50}, b);
  auto approx = mann_whitney_u(a, b);
  REQUIRE(exact.exact);
  REQUIRE_FALSE(approx.exact);
  CHECK(std::fabs(std::log(exact.p_value) - std::log(approx.p_value)) < 0.5);
}

TEST_CASE("bootstrap CI of a percentile change is fast and covers the change", "[gate]") {
  using chaosbench::reports::bootstrap_change_ci;
  auto base = draw(1, 20000);
  auto cur = draw(2, 20000, 130.0);
  chaosbench::reports::BootstrapOptions o;
  auto t0 = std::chrono::steady_clock::now();
  auto p50 = bootstrap_change_ci(base, cur, 50, o);
  auto p99 = bootstrap_change_ci(base, cur, 99, o);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  REQUIRE(p50);
  REQUIRE(p99);
  CHECK(p50->low < 0.30);
  CHECK(p50->high > 0.30);
  CHECK(p50->low > 0.25);
  CHECK(p99->low < 0.30);
  CHECK(p99->high > 0.30);
  CHECK(seconds < 1.0);  // two intervals of 2000 resamples over 20000-point sides
  // Deterministic for a seed.
  auto again = bootstrap_change_ci(base, cur, 50, o);
  CHECK(again->low == p50->low);
  CHECK(again->high == p50->high);
}

TEST_CASE("A/A: independent draws of the same distribution rarely fail", "[gate]") {
  int fails = 0, warns = 0;
  for (std::uint64_t i = 0; i < 100; ++i) {
    RunSpec base, cur;
    base.ranks = draws(2 * i + 1, 2, 150);
    cur.ranks = draws(2 * i + 2, 2, 150);
    auto c = compare(base, cur);
    REQUIRE(c.metrics.size() == 2);  // p50 and p99 of a latency-like metric
    fails += c.verdict == GateStatus::kFail;
    warns += c.verdict == GateStatus::kWarn;
  }
  CHECK(fails <= 1);
  CHECK(warns == 0);
}

TEST_CASE("a 30% throughput regression (step time / 0.7) fails", "[gate]") {
  RunSpec base, cur;
  base.ranks = draws(11, 2, 100);
  cur.ranks = transformed(draws(12, 2, 100), [](double x) { return x / 0.7; });
  auto c = compare(base, cur);
  CHECK(c.verdict == GateStatus::kFail);
  const auto& m = row(c, "p50");
  CHECK(m.status == GateStatus::kFail);
  CHECK(m.change == Approx(1 / 0.7 - 1).margin(0.05));
  REQUIRE(m.ci_low);
  CHECK(*m.ci_low > 0.05);
  CHECK(*m.p_value < 1e-6);
  CHECK(m.n_baseline == 200);
  CHECK(m.reason.find("regression: +") == 0);
  CHECK(m.reason.find("99% CI") != std::string::npos);
  CHECK(m.reason.find("tolerance 5%") != std::string::npos);
}

TEST_CASE("a 3x p99 latency regression with the same median fails on the p99 row", "[gate]") {
  RunSpec base, cur;
  base.ranks = draws(21, 2, 1000);
  cur.ranks = draws(22, 2, 1000);
  // The slowest 3% of the current run's samples take 3x longer: p99 x3, median unchanged.
  std::vector<double> all;
  for (const auto& r : cur.ranks) all.insert(all.end(), r.begin(), r.end());
  double threshold = chaosbench::common::percentile(all, 97);
  cur.ranks = transformed(cur.ranks, [&](double x) { return x >= threshold ? 3 * x : x; });
  auto c = compare(base, cur);
  CHECK(row(c, "p50").status == GateStatus::kPass);
  const auto& p99 = row(c, "p99");
  CHECK(p99.status == GateStatus::kFail);
  CHECK(p99.change > 1.5);
  CHECK(p99.reason.find("upper decile") != std::string::npos);
  CHECK(c.verdict == GateStatus::kFail);
}

TEST_CASE("a 3% regression within the 5% tolerance passes", "[gate]") {
  RunSpec base, cur;
  base.ranks = draws(31, 2, 1000);
  cur.ranks = draws(32, 2, 1000, 103.0);
  auto c = compare(base, cur);
  CHECK(c.verdict == GateStatus::kPass);
  const auto& m = row(c, "p50");
  CHECK(m.status == GateStatus::kPass);
  CHECK(*m.p_value < 0.01);  // significant, yet small
  CHECK(m.reason.find("within tolerance") == 0);
}

TEST_CASE("improvements never fail", "[gate]") {
  for (double factor : {0.5, 0.7, 0.9, 0.97}) {
    RunSpec base, cur;
    base.ranks = draws(41, 2, 500);
    cur.ranks = transformed(draws(42, 2, 500), [&](double x) { return x * factor; });
    auto c = compare(base, cur);
    CHECK(c.verdict == GateStatus::kPass);
  }
  // Higher is better: more bandwidth passes, less fails.
  RunSpec base, better, worse;
  base.name = better.name = worse.name = "comm/busbw";
  base.unit = better.unit = worse.unit = "GB/s";
  base.better = better.better = worse.better = "higher";
  base.ranks = draws(43, 2, 200);
  better.ranks = transformed(draws(44, 2, 200), [](double x) { return x * 1.3; });
  worse.ranks = transformed(draws(45, 2, 200), [](double x) { return x * 0.7; });
  auto up = compare(base, better);
  REQUIRE(up.metrics.size() == 1);  // not latency-like: the median only
  CHECK(up.metrics[0].status == GateStatus::kPass);
  CHECK(up.metrics[0].reason.find("improvement") == 0);
  auto down = compare(base, worse);
  CHECK(down.metrics[0].status == GateStatus::kFail);
  CHECK(*down.metrics[0].ci_high < -0.05);
}

TEST_CASE("fewer samples than min_samples warn, never a silent pass", "[gate]") {
  RunSpec base, cur;
  base.ranks = draws(51, 2, 3);
  cur.ranks = transformed(draws(52, 2, 3), [](double x) { return x * 2; });
  auto c = compare(base, cur);
  CHECK(c.verdict == GateStatus::kWarn);
  CHECK(row(c, "p50").status == GateStatus::kWarn);
  CHECK(row(c, "p50").reason.find("too few samples: 6 baseline, 6 current") == 0);
  // Enough for the median, too few in the upper decile for the p99.
  base.ranks = draws(53, 2, 20);
  cur.ranks = draws(54, 2, 20);
  c = compare(base, cur);
  CHECK(row(c, "p50").status == GateStatus::kPass);
  CHECK(row(c, "p99").status == GateStatus::kWarn);
  CHECK(row(c, "p99").reason.find("in the upper decile") != std::string::npos);
  CHECK(c.verdict == GateStatus::kWarn);
}

TEST_CASE("a per-metric tolerance from the scenario's checks applies", "[gate]") {
  RunSpec base, cur;
  base.ranks = draws(61, 2, 1000);
  cur.ranks = draws(62, 2, 1000, 110.0);
  CHECK(row(compare(base, cur), "p50").status == GateStatus::kFail);
  cur.scenario_json = R"({"checks": [{"metric": "train/step_time", "max": 500, "tolerance": "20%"}]})";
  auto c = compare(base, cur);
  CHECK(row(c, "p50").tolerance == Approx(0.2));
  CHECK(row(c, "p50").status == GateStatus::kPass);
  // A number is a percentage too.
  cur.scenario_json = R"({"checks": [{"metric": "train/step_time", "max": 500, "tolerance": 25}]})";
  CHECK(row(compare(base, cur), "p50").tolerance == Approx(0.25));
  // Other metrics, labels or phases do not match.
  cur.scenario_json = R"({"checks": [{"metric": "train/comm_time", "max": 500, "tolerance": "20%"},
                                     {"metric": "train/step_time", "labels": {"bytes": 4}, "max": 1, "tolerance": 20},
                                     {"metric": "train/step_time", "phase": "baseline", "max": 1, "tolerance": 20}]})";
  c = compare(base, cur);
  CHECK(row(c, "p50").tolerance == Approx(0.05));
  CHECK(row(c, "p50").status == GateStatus::kFail);
  // A tighter tolerance turns a 3% regression into a failure.
  cur.ranks = draws(62, 2, 1000, 103.0);
  cur.scenario_json = R"({"checks": [{"metric": "train/step_time", "phase": "overall", "max": 500, "tolerance": "1%"}]})";
  CHECK(row(compare(base, cur), "p50").status == GateStatus::kFail);
}

TEST_CASE("single values are compared without a test, fault and one-sided records are skipped", "[gate]") {
  RunSpec spec;
  spec.ranks = draws(71, 2, 100);
  auto base = make_run(spec);
  auto cur = make_run(spec);
  Labels overall{{"phase", std::string("overall")}};
  base.metrics.push_back(record("train/throughput", "samples/s", "higher", overall, 1000));
  cur.metrics.push_back(record("train/throughput", "samples/s", "higher", overall, 700));
  base.metrics.push_back(record("fault/apply_latency", "us", "lower", overall, 10));
  cur.metrics.push_back(record("fault/apply_latency", "us", "lower", overall, 1000));
  base.metrics.push_back(record("net/tx_bytes", "bytes", "none", overall, 10));
  cur.metrics.push_back(record("net/tx_bytes", "bytes", "none", overall, 1000));
  cur.metrics.push_back(record("train/mfu", "%", "higher", overall, 1));
  auto c = compare_runs(base, cur);
  REQUIRE(c.metrics.size() == 3);  // step_time p50, p99, throughput
  const auto& tp = row(c, "value", "train/throughput");
  CHECK(tp.status == GateStatus::kWarn);
  CHECK(tp.change == Approx(-0.3));
  CHECK(!tp.p_value);
  CHECK(tp.reason.find("single value, no test") == 0);
  CHECK(c.verdict == GateStatus::kWarn);
  cur.metrics[1].value = 980;  // -2%: within the tolerance
  CHECK(row(compare_runs(base, cur), "value", "train/throughput").status == GateStatus::kPass);
}

TEST_CASE("samples come from the record's phase window", "[gate]") {
  // Two phases: baseline [0, 1) s and fault:slow [1, 2) s; the current run is 2x slower
  // in the fault window only.
  auto build = [](std::uint64_t seed, double fault_factor) {
    RunResult run;
    run.phases = {{"baseline", 0, 1}, {"fault:slow", 1, 2}};
    for (std::int64_t r = 0; r < 2; ++r) {
      Series s;
      s.name = "comm/latency";
      s.unit = "us";
      s.labels = {{"bytes", std::int64_t{1024}}, {"rank", r}};
      auto v = draw(seed * 10 + static_cast<std::uint64_t>(r), 200);
      for (std::size_t i = 0; i < v.size(); ++i) {
        double t = 0.01 * static_cast<double>(i);
        s.t.push_back(t);
        s.v.push_back(t >= 1 ? v[i] * fault_factor : v[i]);
      }
      run.series.push_back(std::move(s));
    }
    for (const char* phase : {"baseline", "fault:slow"})
      run.metrics.push_back(record("comm/latency", "us", "lower", {{"bytes", std::int64_t{1024}}, {"phase", std::string(phase)}}));
    return run;
  };
  auto c = compare_runs(build(1, 1.0), build(2, 2.0));
  REQUIRE(c.metrics.size() == 4);
  for (const auto& m : c.metrics) {
    CHECK(m.n_baseline == 200);  // 100 per rank in each window
    bool in_fault = chaosbench::reports::label_to_string(m.labels.at("phase")) == "fault:slow";
    if (m.stat == "p50") CHECK(m.status == (in_fault ? GateStatus::kFail : GateStatus::kPass));
  }
}

// A machine whose speed drifts over seconds (other load coming and going): each run's
// samples sit on a level that changes every stretch by up to +-15%, and the two runs'
// levels differ by 10%. One run per side cannot tell that from a regression, so the gate
// must not fail it; a real 43% slowdown (30% less throughput) on the same machine must.
TEST_CASE("gate: drift within a run widens the band, so machine noise between runs does not fail", "[gate]") {
  auto drifting = [](std::uint64_t seed, double level) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> stretch(0.85, 1.15);
    std::vector<double> v;
    for (int block = 0; block < 20; ++block) {
      const double f = stretch(rng);
      for (double x : draw(seed * 31 + static_cast<std::uint64_t>(block), 50, level * f, 0.05)) v.push_back(x);
    }
    return v;
  };
  RunSpec base, same, slower;
  base.ranks = {drifting(1, 100)};
  same.ranks = {drifting(2, 110)};
  slower.ranks = {drifting(3, 143)};
  auto aa = compare_runs(make_run(base), make_run(same));
  CHECK(aa.verdict != GateStatus::kFail);
  for (const auto& m : aa.metrics) CHECK_THAT(m.reason, Catch::Contains("within-run noise"));
  auto regression = compare_runs(make_run(base), make_run(slower));
  CHECK(regression.verdict == GateStatus::kFail);
}

}  // namespace gate_test

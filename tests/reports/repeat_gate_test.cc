// Repeated runs: the combined result (reports/gate/repeat_combine.h) and the run-level gate
// (reports/gate/gate_runs.h) on synthetic runs with a seeded run-to-run noise of 1.5 % (the
// trainer's on this machine) and of 30 % (small-message collective latency), A/A false
// alarms, a 10 % slowdown, thin data and a reference p-value from SciPy 1.10.1.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "reports/gate/gate.h"
#include "reports/gate/gate_runs.h"
#include "reports/model/json_io.h"
#include "reports/gate/repeat_combine.h"

namespace repeat_gate_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

namespace {

using namespace chaosbench::reports;

MetricRecord sampled(const std::string& name, double p50, double p99, std::string phase = "overall") {
  MetricRecord r;
  r.name = name;
  r.unit = "ms";
  r.better = chaosbench::common::Better::kLower;
  r.labels = {{"phase", std::move(phase)}};
  r.value = p50;
  r.stats = Stats{100, p50, 1, p50 / 2, p50, p50 * 1.2, p99, p99 * 1.1, p50 * 100};
  return r;
}

MetricRecord single(const std::string& name, double value) {
  MetricRecord r;
  r.name = name;
  r.unit = "samples/s";
  r.better = chaosbench::common::Better::kHigher;
  r.labels = {{"phase", std::string("overall")}};
  r.value = value;
  return r;
}

// One run's result: step time p50 `step` (p99 1.6x), throughput 1000 / step.
RunResult run_with(double step, Verdict verdict = Verdict::kPass, std::string reason = "") {
  RunResult r;
  r.run_id = "r";
  r.verdict = verdict;
  r.reason = std::move(reason);
  r.duration_s = 2;
  r.metrics = {sampled("train/step_time", step, step * 1.6), single("train/throughput", 1000.0 / step)};
  return r;
}

// `n` runs with lognormal run-to-run noise `sigma` around step time `median`, combined.
RunResult repeated(std::uint64_t seed, int n, double median, double sigma) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, sigma);
  std::vector<RunToCombine> runs;
  for (int i = 0; i < n; ++i) runs.push_back({run_with(median * std::exp(normal(rng))), "run-" + std::to_string(i + 1)});
  return combine_runs(runs, "combined", false);
}

const MetricComparison* row(const Comparison& c, const std::string& name, const std::string& stat) {
  for (const auto& m : c.metrics)
    if (m.name == name && m.stat == stat) return &m;
  return nullptr;
}

}  // namespace

TEST_CASE("repeat: the combined result holds each run's figures and their medians", "[repeat]") {
  std::vector<RunToCombine> runs{{run_with(10), "run-01"}, {run_with(12), "run-02"}, {run_with(11), "run-03"}};
  runs[1].result.checks.push_back({"train/step_time", {}, "<=", 11.5, 12.0, CheckStatus::kFail, "too slow"});
  runs[1].result.verdict = Verdict::kFail;
  runs[1].result.reason = "1 check failed: too slow";
  for (int i : {0, 2}) runs[i].result.checks.push_back(
      {"train/step_time", {}, "<=", 11.5, runs[i].result.metrics[0].value, CheckStatus::kPass, "ok"});
  const auto c = combine_runs(runs, "combined", false);
  REQUIRE(c.metrics.size() == 2);
  const auto& step = c.metrics[0];
  REQUIRE(step.runs);
  CHECK(step.runs->p50 == std::vector<double>{10, 12, 11});
  CHECK(step.value == 11);
  REQUIRE(step.stats);
  CHECK(step.stats->n == 300);
  CHECK(step.stats->p99 == Approx(11 * 1.6));
  CHECK(c.metrics[1].runs->p50.empty());  // a single number has values only
  // The check one run of three missed passes on the median; so does the whole.
  REQUIRE(c.checks.size() == 1);
  CHECK(c.checks[0].status == CheckStatus::kPass);
  CHECK(*c.checks[0].value == 11);
  CHECK(c.verdict == Verdict::kPass);
  REQUIRE(c.repeat);
  CHECK(c.repeat->runs.size() == 3);
  CHECK(c.repeat->runs[1].verdict == Verdict::kFail);
  CHECK(c.duration_s == 6);

  // A run that failed for another reason fails the whole, named.
  runs[2].result.verdict = Verdict::kFail;
  runs[2].result.reason = "rank 1 exited with code 3";
  const auto failed = combine_runs(runs, "combined", false);
  CHECK(failed.verdict == Verdict::kFail);
  CHECK(failed.reason == "run 3: rank 1 exited with code 3");
}

TEST_CASE("repeat: runs, repeat, basis and points survive results.json", "[repeat]") {
  auto base = repeated(1, 5, 10, 0.015);
  auto cur = repeated(2, 5, 11, 0.015);
  cur.comparison = compare_runs(base, cur);
  const auto back = from_json(to_json(cur));
  REQUIRE(back.repeat);
  CHECK(back.repeat->count == 5);
  REQUIRE(back.metrics[0].runs);
  CHECK(back.metrics[0].runs->p50 == cur.metrics[0].runs->p50);
  CHECK(back.metrics[0].runs->p99 == cur.metrics[0].runs->p99);
  REQUIRE(back.comparison);
  CHECK(back.comparison->metrics[0].basis == "runs");
  CHECK(back.comparison->metrics[0].current_points == cur.comparison->metrics[0].current_points);
  CHECK(back.comparison->metrics[0].current_points.size() == 5);
}

TEST_CASE("repeat gate: a 10 % slowdown fails, run-level A/A passes", "[repeat][gate]") {
  int aa_failures = 0, detected = 0;
  for (std::uint64_t s = 0; s < 40; ++s) {
    const auto a = repeated(100 + s, 5, 10, 0.015);
    const auto b = repeated(200 + s, 5, 10, 0.015);
    const auto slow = repeated(300 + s, 5, 10 / 0.9, 0.015);
    aa_failures += compare_runs(a, b).verdict == GateStatus::kFail;
    const auto c = compare_runs(a, slow);
    detected += c.verdict == GateStatus::kFail;
    const auto* t = row(c, "train/throughput", "value");
    REQUIRE(t);
    CHECK(t->basis == "runs");
    CHECK(t->n_baseline == 5);
  }
  CHECK(aa_failures == 0);
  CHECK(detected == 40);
}

TEST_CASE("repeat gate: large run-to-run swings pass A/A", "[repeat][gate]") {
  int failures = 0;
  for (std::uint64_t s = 0; s < 40; ++s)
    failures += compare_runs(repeated(500 + s, 5, 3000, 0.3), repeated(600 + s, 5, 3000, 0.3)).verdict ==
                GateStatus::kFail;
  CHECK(failures <= 2);  // alpha 0.01 two-sided: about 0.2 expected per 40 on one metric
}

TEST_CASE("repeat gate: Welch's test on the logarithms, as SciPy computes it", "[repeat][gate]") {
  std::vector<RunToCombine> a, b;
  for (double x : {6.35, 6.36, 6.45, 6.41, 6.42}) a.push_back({run_with(x), ""});
  for (double x : {7.01, 7.12, 6.98, 7.20, 7.05}) b.push_back({run_with(x), ""});
  const auto c = compare_runs(combine_runs(a, "a", false), combine_runs(b, "b", false));
  const auto* m = row(c, "train/step_time", "p50");
  REQUIRE(m);
  // scipy.stats.ttest_ind(log(b), log(a), equal_var=False).pvalue; exp(mean log b - mean log a) - 1.
  // Three rows (p50, p99 = 1.6 p50, throughput = 1000 / p50) have that same p, which
  // Benjamini-Hochberg leaves as it is (min over j >= k of 3 p / j = p).
  CHECK(*m->p_value == Approx(3.7181414778711264e-06).epsilon(1e-8));
  CHECK_THAT(m->reason, Catch::Contains("(BH, 3 rows)"));
  CHECK(m->change == Approx(0.10529520736730236).epsilon(1e-10));
  CHECK(m->status == GateStatus::kFail);
  CHECK(*m->ci_low > 0);
  CHECK_THAT(m->reason, Catch::Contains("5 vs 5 runs"));
}

TEST_CASE("repeat gate: too few runs or a single run on one side warn", "[repeat][gate]") {
  const auto two = repeated(1, 2, 10, 0.015);
  const auto five = repeated(2, 5, 20, 0.015);
  auto c = compare_runs(two, five);
  CHECK(c.verdict == GateStatus::kWarn);
  CHECK_THAT(row(c, "train/step_time", "p50")->reason, Catch::Contains("too few runs: 2 baseline, 5 current"));
  c = compare_runs(run_with(10), five);  // a single run against a repeated one
  CHECK(c.verdict == GateStatus::kWarn);
  CHECK(row(c, "train/step_time", "p50")->n_baseline == 1);
}

TEST_CASE("repeat gate: Benjamini-Hochberg adjusts the rows' p-values together", "[repeat][gate]") {
  // m = 4 raw p-values 0.001, 0.008, 0.02, 0.5, each row 20 % slower: the adjusted p of
  // the k-th smallest is min over j >= k of m p_(j) / j = 0.004, 0.016, 0.0267, 0.5, so at
  // alpha 0.01 only the first fails. (SciPy 1.11 has it as scipy.stats.false_discovery_control.)
  std::vector<MetricComparison> rows;
  for (double p : {0.02, 0.001, 0.5, 0.008}) {
    MetricComparison m;
    m.name = "m" + std::to_string(rows.size());
    m.better = chaosbench::common::Better::kLower;
    m.basis = "runs";
    m.n_baseline = m.n_current = 5;
    m.change = 0.2;
    m.p_value = p;
    rows.push_back(m);
  }
  judge_run_level_rows(rows, GateOptions{});
  CHECK(*rows[1].p_value == Approx(0.004));
  CHECK(*rows[3].p_value == Approx(0.016));
  CHECK(*rows[0].p_value == Approx(0.08 / 3));
  CHECK(*rows[2].p_value == Approx(0.5));
  CHECK(rows[1].status == GateStatus::kFail);
  for (int i : {0, 2, 3}) CHECK(rows[i].status == GateStatus::kPass);
  CHECK_THAT(rows[1].reason, Catch::Contains("(BH, 4 rows)"));
}

TEST_CASE("repeat gate: figures at zero or constant compare without logarithms", "[repeat][gate]") {
  auto zeros = [](double v) {
    std::vector<RunToCombine> runs;
    for (int i = 0; i < 4; ++i) {
      auto r = run_with(10);
      MetricRecord lost;
      lost.name = "resilience/lost_steps";
      lost.better = chaosbench::common::Better::kLower;
      lost.labels = {{"phase", std::string("overall")}};
      lost.value = v;
      r.metrics.push_back(lost);
      runs.push_back({r, ""});
    }
    return combine_runs(runs, "z", false);
  };
  auto c = compare_runs(zeros(0), zeros(0));
  const auto* m = row(c, "resilience/lost_steps", "value");
  REQUIRE(m);
  CHECK(m->status == GateStatus::kPass);
  CHECK(*m->p_value == 1.0);
  c = compare_runs(zeros(0), zeros(3));
  m = row(c, "resilience/lost_steps", "value");
  CHECK(m->status == GateStatus::kFail);  // every run lost 3 steps, none did before
}

}  // namespace repeat_gate_test

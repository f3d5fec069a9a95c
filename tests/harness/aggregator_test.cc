#include <catch2/catch.hpp>

#include "harness/derive/aggregator.h"
#include "harness/derive/check_evaluator.h"
#include "harness/derive/comm_derivation.h"

namespace aggregator_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench;
using namespace chaosbench::harness;

namespace {

StoredSample sample(double t, const std::string& name, double v, bench::Labels labels = {}, int rank = 0) {
  return StoredSample{bench::Sample{rank, 1000.0 + t, name, v, "ms", std::move(labels)}, 1000.0 + t};
}

const reports::MetricRecord* find(const std::vector<reports::MetricRecord>& rs, const std::string& name,
                                  const std::string& phase) {
  for (const auto& r : rs)
    if (r.name == name && reports::label_to_string(r.labels.at("phase")) == phase) return &r;
  return nullptr;
}

}  // namespace

TEST_CASE("stats: numpy's linear percentiles, mean, stddev", "[aggregate]") {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);
  auto s = compute_stats(v);
  CHECK(s.n == 100);
  // np.percentile(range(1, 101), [50, 90, 99]), bit for bit (not nearest rank's 50, 90, 99).
  CHECK(s.p50 == 50.5);
  CHECK(s.p90 == 90.10000000000001);
  CHECK(s.p99 == 99.01);
  CHECK(s.min == 1);
  CHECK(s.max == 100);
  CHECK(s.mean == Approx(50.5));
  CHECK(s.stddev == Approx(28.866).epsilon(1e-3));
  CHECK(compute_stats({7}).p99 == 7);
  CHECK(compute_stats({}).n == 0);
}

TEST_CASE("phases: baseline, fault windows and recovery from the schedule", "[aggregate]") {
  FaultSpec f;
  f.name = "slow";
  f.type = "marker";
  f.at = Duration{std::chrono::seconds(2)};
  f.duration = Duration{std::chrono::seconds(3)};
  FaultSchedule s({f});
  s.mark_applied(0, 2.0);
  s.mark_reverted(0, 5.0);
  auto phases = build_phases(s, {f}, 10.0);
  REQUIRE(phases.size() == 3);
  CHECK(phases[0].name == "baseline");
  CHECK(phases[0].end_s == 2.0);
  CHECK(phases[1].name == "fault:slow");
  CHECK(phases[2].name == "recovery:slow");
  CHECK(phases[2].end_s == 10.0);

  std::vector<StoredSample> samples{sample(1, "train/step_time", 10), sample(3, "train/step_time", 30, {}, 1),
                                    sample(4, "train/step_time", 50), sample(6, "train/step_time", 12)};
  auto records = aggregate(samples, 1000.0, phases);
  CHECK(find(records, "train/step_time", "baseline")->value == 10);
  CHECK(find(records, "train/step_time", "fault:slow")->value == 40);
  CHECK(find(records, "train/step_time", "fault:slow")->stats->n == 2);
  CHECK(find(records, "train/step_time", "recovery:slow")->value == 12);
  CHECK(find(records, "train/step_time", "overall")->stats->n == 4);
  CHECK(find(records, "train/step_time", "overall")->better == chaosbench::common::Better::kLower);
}

TEST_CASE("comm: algbw is bytes over mean time, busbw applies the nccl-tests factor", "[aggregate]") {
  reports::Labels labels{{"collective", std::string("allreduce")}, {"algorithm", std::string("ring")},
                         {"bytes", std::int64_t{16 << 20}}, {"ranks", std::int64_t{4}},
                         {"phase", std::string("overall")}};
  auto rs = derive_comm_records(labels, {1000.0, 3000.0});  // mean 2 ms
  REQUIRE(rs.size() == 3);
  CHECK(rs[0].name == "comm/algbw");
  CHECK(rs[0].value == Approx((16 << 20) / 2e-3 / 1e9));
  CHECK(rs[1].name == "comm/busbw");
  CHECK(rs[1].value == Approx(rs[0].value * 1.5));
  CHECK(rs[2].name == "comm/iter_cv");
  CHECK(rs[2].value == Approx(50.0));
  labels["collective"] = std::string("broadcast");
  auto b = derive_comm_records(labels, {1000.0});
  CHECK(b[1].value == Approx(b[0].value));
  labels["collective"] = std::string("allgather");
  auto g = derive_comm_records(labels, {1000.0});
  CHECK(g[1].value == Approx(g[0].value * 0.75));
}

TEST_CASE("checks: worst matching record decides, no record fails", "[aggregate]") {
  std::vector<reports::MetricRecord> rs{
      {"comm/busbw", "GB/s", chaosbench::common::Better::kHigher, {{"phase", std::string("overall")}, {"bytes", std::int64_t{1024}}}, 0.5, {}},
      {"comm/busbw", "GB/s", chaosbench::common::Better::kHigher, {{"phase", std::string("overall")}, {"bytes", std::int64_t{2048}}}, 0.2, {}}};
  CheckSpec c;
  c.metric = "comm/busbw";
  c.min = 0.3;
  auto res = evaluate_checks({c}, rs);
  REQUIRE(res.size() == 1);
  CHECK(res[0].status == reports::CheckStatus::kFail);
  CHECK(*res[0].value == 0.2);
  c.labels["bytes"] = std::int64_t{1024};
  CHECK(evaluate_checks({c}, rs)[0].status == reports::CheckStatus::kPass);
  c.metric = "comm/nothing";
  auto none = evaluate_checks({c}, rs);
  CHECK(none[0].status == reports::CheckStatus::kFail);
  CHECK_THAT(none[0].message, Catch::Contains("no record"));
}

TEST_CASE("aggregate: a hybrid-parallel rank's coordinates name its series, not a record", "[aggregate]") {
  std::vector<StoredSample> samples;
  for (int r = 0; r < 4; ++r) {
    bench::Labels coords{{"tp_rank", std::int64_t{r % 2}}, {"pp_stage", std::int64_t{r / 2}}, {"dp_rank", std::int64_t{0}}};
    samples.push_back(sample(1, "train/step_time", 100.0 + r, coords, r));
    coords["group"] = std::string("tp");
    samples.push_back(sample(1, "comm/time", 10.0, coords, r));
  }
  const std::vector<reports::Phase> phases = {{"baseline", 0, 5}};
  const auto records = aggregate(samples, 1000.0, phases);
  int steps = 0, comm = 0;
  for (const auto& rec : records) {
    CHECK_FALSE(rec.labels.contains("tp_rank"));
    CHECK_FALSE(rec.labels.contains("pp_stage"));
    if (rec.name == "train/step_time" && rec.labels.at("phase") == reports::LabelValue{std::string("overall")}) {
      ++steps;
      CHECK(rec.stats->n == 4);
      CHECK(rec.value == Approx(101.5));
    }
    if (rec.name == "comm/time") comm += rec.labels.contains("group") ? 1 : 0;
  }
  CHECK(steps == 1);
  CHECK(comm == 2);  // baseline and overall, group kept
  const auto series = build_series(samples, 1000.0, 1000);
  CHECK(series.size() == 8);  // per rank and metric, the coordinates kept
}

}  // namespace aggregator_test

// A hybrid-parallel job's per-group records (harness/derive/parallel_derivation.h, and
// the stage-aware per-rank ones in train_derivation.cc) from hand-made step events, the
// pooling of its coordinate-labelled samples, and a data-parallel run left as it was.
// Ranks in Megatron's order: rank = tp_rank + tp × (dp_rank + dp × pp_stage).
#include <catch2/catch.hpp>

#include <functional>

#include "harness/derive/train_derivation.h"
#include "reports/model/text_format.h"

namespace parallel_derivation_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench;
using namespace chaosbench::harness;

namespace {

constexpr double kT0 = 1000.0;

struct Layout {
  int tp = 2, pp = 2, dp = 2;
  int world() const { return tp * pp * dp; }
  bench::Labels coords(int rank) const {
    return {{"tp_rank", std::int64_t{rank % tp}}, {"dp_rank", std::int64_t{rank / tp % dp}},
            {"pp_stage", std::int64_t{rank / (tp * dp)}}};
  }
};

// What one rank reports in a step: stage_ms, compute_ms and bubble_pct by rank.
struct RankShape {
  double stage_ms = 100, compute_ms = 60, bubble_pct = 20;
};

struct HybridRun {
  Layout layout;
  std::vector<StoredEvent> events;
  std::vector<StoredSample> samples;
  double end_s = 0;

  // Steps 1..n, one every 0.1 s from t = 1; `shape(rank)` gives each rank's numbers.
  void steps(int n, const std::function<RankShape(int)>& shape) {
    for (int s = 1; s <= n; ++s) {
      const double t = kT0 + 1 + 0.1 * s;
      for (int r = 0; r < layout.world(); ++r) {
        auto k = shape(r);
        bench::Labels f = layout.coords(r);
        f.insert({{"step", std::int64_t{s}}, {"step_ms", 200.0}, {"compute_ms", k.compute_ms}, {"stage_ms", k.stage_ms},
                  {"bubble_pct", k.bubble_pct}, {"samples", std::int64_t{16}}, {"loss", 1.0},
                  {"tp", std::int64_t{layout.tp}}, {"pp", std::int64_t{layout.pp}}, {"dp", std::int64_t{layout.dp}}});
        events.push_back({bench::Event{r, t, "step", std::move(f)}, t});
      }
      end_s = 1 + 0.1 * s + 0.5;
    }
  }
  std::vector<reports::MetricRecord> derive() const {
    const std::vector<reports::Phase> phases = {{"baseline", 0, end_s}};
    return derive_training_metrics({events, samples, kT0, end_s, phases, {}, std::nullopt});
  }
};

// The record of `name` in the overall phase whose labels less phase are exactly `labels`.
const reports::MetricRecord* record(const std::vector<reports::MetricRecord>& rs, const std::string& name,
                                    const reports::Labels& labels = {}) {
  for (const auto& r : rs)
    if (r.name == name && reports::label_value(r.labels, "phase") == "overall" && reports::without_phase(r.labels) == labels)
      return &r;
  return nullptr;
}

double value(const std::vector<reports::MetricRecord>& rs, const std::string& name, const reports::Labels& labels = {}) {
  const auto* r = record(rs, name, labels);
  INFO(name << " " << reports::format_labels(labels));
  REQUIRE(r != nullptr);
  return r->value;
}

reports::Labels stage(std::int64_t s) { return {{"pp_stage", s}}; }
reports::Labels group(std::int64_t s, std::int64_t g) { return {{"pp_stage", s}, {"tp_group", g}}; }

std::size_t count(const std::vector<reports::MetricRecord>& rs, const std::string& name) {
  return static_cast<std::size_t>(std::count_if(rs.begin(), rs.end(), [&](const auto& r) {
    return r.name == name && reports::label_value(r.labels, "phase") == "overall";
  }));
}

}  // namespace

TEST_CASE("parallel derivation: a slower stage by design, compared stage to stage", "[parallel-derivation]") {
  HybridRun run;  // tp 2, pp 2, dp 2: stage 1 = ranks 4..7, TP groups 2 (ranks 4, 5) and 3 (6, 7)
  run.steps(20, [](int r) { return r >= 4 ? RankShape{150, 90, 10} : RankShape{100, 60, 30}; });
  auto rs = run.derive();

  CHECK(value(rs, "train/stage_time", stage(0)) == Approx(100));
  CHECK(value(rs, "train/stage_time", stage(1)) == Approx(150));
  CHECK(value(rs, "train/straggler_score", stage(0)) == Approx(1.0));
  CHECK(value(rs, "train/straggler_score", stage(1)) == Approx(100.0 / 150));
  CHECK(record(rs, "train/straggler_score", stage(1))->unit == "ratio");
  // The groups of one stage are equal: the stage's slowness is not any group's.
  for (auto [s, g] : {std::pair{0, 0}, {0, 1}, {1, 2}, {1, 3}})
    CHECK(value(rs, "train/straggler_score", group(s, g)) == Approx(1.0));
  CHECK(value(rs, "train/stage_time", group(1, 3)) == Approx(150));
  CHECK(value(rs, "train/pipeline_bubble", stage(0)) == Approx(30));
  CHECK(value(rs, "train/pipeline_bubble", stage(1)) == Approx(10));
  CHECK(record(rs, "train/pipeline_bubble", stage(1))->stats->n == 20 * 4);
  CHECK(record(rs, "train/pipeline_bubble", stage(1))->unit == "%");
  // Per rank and imbalance compare within a stage: the stages' different work is no imbalance.
  CHECK(value(rs, "train/rank_imbalance") == Approx(0));
  CHECK(value(rs, "train/straggler_score", {{"rank", std::int64_t{5}}, {"pp_stage", std::int64_t{1}}}) == Approx(1.0));
  // Per phase, as the per-rank score.
  CHECK(count(rs, "train/straggler_score") == 8 + 2 + 4);
}

TEST_CASE("parallel derivation: one slow shard shows in its TP group, its stage and its rank", "[parallel-derivation]") {
  HybridRun run;
  // Rank 7 = tp_rank 1, dp_rank 1, stage 1: TP group 3.
  run.steps(20, [](int r) {
    if (r == 7) return RankShape{300, 240, 5};
    return RankShape{100, 60, 20};
  });
  auto rs = run.derive();

  // A group moves at its slowest member's pace: the median of two would hide rank 7.
  CHECK(value(rs, "train/stage_time", group(1, 3)) == Approx(300));
  CHECK(value(rs, "train/stage_time", group(1, 2)) == Approx(100));
  CHECK(value(rs, "train/straggler_score", group(1, 3)) == Approx(1.0 / 3));
  CHECK(value(rs, "train/straggler_score", group(1, 2)) == Approx(1.0));
  CHECK(value(rs, "train/straggler_score", group(0, 1)) == Approx(1.0));
  CHECK(value(rs, "train/straggler_score", stage(1)) == Approx(1.0 / 3));
  CHECK(value(rs, "train/straggler_score", {{"rank", std::int64_t{7}}, {"pp_stage", std::int64_t{1}}}) == Approx(0.25));
  CHECK(value(rs, "train/rank_imbalance") == Approx(300));
}

TEST_CASE("parallel derivation: what needs two to compare, and no pipeline without stages", "[parallel-derivation]") {
  SECTION("tp 2, pp 1, dp 1: one stage of one TP group, no bubble") {
    HybridRun run;
    run.layout = {2, 1, 1};
    run.steps(10, [](int) { return RankShape{}; });
    auto rs = run.derive();
    CHECK(value(rs, "train/stage_time", stage(0)) == Approx(100));
    CHECK(record(rs, "train/straggler_score", stage(0)) == nullptr);
    CHECK(record(rs, "train/straggler_score", group(0, 0)) == nullptr);
    CHECK(record(rs, "train/stage_time", group(0, 0)) == nullptr);
    CHECK(count(rs, "train/pipeline_bubble") == 0);
  }
  SECTION("tp 1, pp 4, dp 1: stages of one rank have no per-rank score") {
    HybridRun run;
    run.layout = {1, 4, 1};
    run.steps(10, [](int r) { return RankShape{100.0 + 10 * r, 60, 30}; });
    auto rs = run.derive();
    CHECK(value(rs, "train/straggler_score", stage(3)) == Approx(100.0 / 130));
    CHECK(count(rs, "train/straggler_score") == 4);
    CHECK(count(rs, "train/pipeline_bubble") == 4);
    CHECK(record(rs, "train/rank_imbalance") == nullptr);
  }
}

TEST_CASE("parallel derivation: a data-parallel run's records are unchanged", "[parallel-derivation]") {
  HybridRun hybrid;
  hybrid.layout = {1, 1, 4};
  hybrid.steps(20, [](int r) { return RankShape{100, r == 3 ? 180.0 : 60.0, 0}; });
  // The same steps without coordinates, and with coordinates that do not fit together
  // (tp_rank 1 of tp 1): both are a data-parallel job's.
  HybridRun plain = hybrid, broken = hybrid;
  for (auto& e : plain.events)
    for (const char* key : {"tp_rank", "pp_stage", "dp_rank", "tp", "pp", "dp", "stage_ms", "bubble_pct"})
      e.event.fields.erase(key);
  for (auto& e : broken.events) e.event.fields["tp_rank"] = std::int64_t{1};
  auto rs = plain.derive();
  auto same = broken.derive();
  REQUIRE(rs.size() == same.size());
  for (std::size_t i = 0; i < rs.size(); ++i) {
    CHECK(rs[i].name == same[i].name);
    CHECK(rs[i].labels == same[i].labels);
    CHECK(rs[i].value == same[i].value);
  }
  for (const auto& r : rs) {
    INFO(r.name << " " << reports::format_labels(r.labels));
    CHECK(r.name != "train/stage_time");
    CHECK(r.name != "train/pipeline_bubble");
    CHECK_FALSE(r.labels.contains("pp_stage"));
    CHECK_FALSE(r.labels.contains("tp_group"));
  }
  CHECK(value(rs, "train/straggler_score", {{"rank", std::int64_t{3}}}) == Approx(60.0 / 180));
  CHECK(value(rs, "train/rank_imbalance") == Approx(200));
  // Valid coordinates with dp only (tp 1, pp 1) compare every rank as before, naming the stage.
  auto dp_only = hybrid.derive();
  CHECK(value(dp_only, "train/straggler_score", {{"rank", std::int64_t{3}}, {"pp_stage", std::int64_t{0}}}) ==
        Approx(60.0 / 180));
  CHECK(value(dp_only, "train/rank_imbalance") == Approx(200));
}

}  // namespace parallel_derivation_test

// Hybrid parallelism's arithmetic: rank coordinates and groups in Megatron-LM's
// order, the layers' split over stages, and the GPipe and 1F1B schedules against the
// analytic bubble (p − 1) / (m + p − 1).
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <stdexcept>

#include "bench/train/hybrid/parallel_layout.h"
#include "bench/train/hybrid/pipeline_schedule.h"

namespace parallel_layout_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::bench::train;

TEST_CASE("parallel layout: TP ranks are contiguous, then replicas, then stages (Megatron's order)", "[parallel]") {
  const ParallelLayout l({2, 2, 2});  // tp 2, pp 2, dp 2: world 8
  REQUIRE(l.world() == 8);
  CHECK(l.coords(0) == RankCoords{0, 0, 0});
  CHECK(l.coords(1) == RankCoords{1, 0, 0});
  CHECK(l.coords(2) == RankCoords{0, 0, 1});
  CHECK(l.coords(5) == RankCoords{1, 1, 0});
  for (int r = 0; r < 8; ++r) CHECK(l.rank(l.coords(r)) == r);
  CHECK(l.tp_group(5) == std::vector<int>{4, 5});
  CHECK(l.pp_group(1) == std::vector<int>{1, 5});
  CHECK(l.dp_group(5) == std::vector<int>{5, 7});
  CHECK(l.stage_ranks(1) == std::vector<int>{4, 5, 6, 7});
  CHECK(l.tp_group_ranks(3) == std::vector<int>{6, 7});
  CHECK(l.replica_ranks(1) == std::vector<int>{2, 3, 6, 7});
  CHECK_THROWS_AS(l.coords(8), std::out_of_range);
  CHECK_THROWS_AS(l.stage_ranks(2), std::out_of_range);
  CHECK_THROWS_AS(ParallelLayout({0, 1, 1}), std::invalid_argument);
}

TEST_CASE("parallel layout: every rank is in exactly one group of each kind", "[parallel]") {
  for (const ParallelDims d : {ParallelDims{1, 1, 4}, ParallelDims{2, 2, 1}, ParallelDims{1, 2, 2}, ParallelDims{2, 4, 3}}) {
    const ParallelLayout l(d);
    INFO("tp " << d.tp << " pp " << d.pp << " dp " << d.dp);
    std::multiset<int> tp, pp, dp;
    for (int g = 0; g < l.tp_groups(); ++g)
      for (int r : l.tp_group_ranks(g)) tp.insert(r);
    for (int s = 0; s < d.pp; ++s)
      for (int r : l.stage_ranks(s)) pp.insert(r);
    for (int rep = 0; rep < d.dp; ++rep)
      for (int r : l.replica_ranks(rep)) dp.insert(r);
    for (int r = 0; r < l.world(); ++r) {
      CHECK(tp.count(r) == 1);
      CHECK(pp.count(r) == 1);
      CHECK(dp.count(r) == 1);
      const auto g = l.tp_group(r);
      CHECK(std::find(g.begin(), g.end(), r) != g.end());
      CHECK(static_cast<int>(l.pp_group(r).size()) == d.pp);
      CHECK(static_cast<int>(l.dp_group(r).size()) == d.dp);
    }
  }
}

TEST_CASE("parallel layout: layers split over stages evenly, earlier stages take the remainder", "[parallel]") {
  CHECK(split_layers(4, 2) == std::vector<std::pair<int, int>>{{0, 2}, {2, 4}});
  CHECK(split_layers(5, 2) == std::vector<std::pair<int, int>>{{0, 3}, {3, 5}});
  CHECK(split_layers(3, 3) == std::vector<std::pair<int, int>>{{0, 1}, {1, 2}, {2, 3}});
  CHECK_THROWS_AS(split_layers(3, 4), std::invalid_argument);  // more stages than layers
  CHECK(tp_split_error(1024, 2).empty());
  CHECK_FALSE(tp_split_error(1023, 2).empty());
}

TEST_CASE("pipeline schedules: every microbatch's forward then backward, once each", "[parallel]") {
  for (auto schedule : {PipelineSchedule::kGpipe, PipelineSchedule::kOneFOneB})
    for (int p : {1, 2, 4})
      for (int m : {1, 3, 8})
        for (int s = 0; s < p; ++s) {
          const auto ops = stage_ops(schedule, s, p, m);
          REQUIRE(ops.size() == static_cast<std::size_t>(2 * m));
          for (int i = 0; i < m; ++i) {
            const auto f = std::find(ops.begin(), ops.end(), PipelineOp{true, i});
            const auto b = std::find(ops.begin(), ops.end(), PipelineOp{false, i});
            CHECK(f < b);
            CHECK(b != ops.end());
          }
        }
  CHECK(parse_pipeline_schedule("1f1b") == PipelineSchedule::kOneFOneB);
  CHECK_FALSE(parse_pipeline_schedule("interleaved"));
  CHECK_THROWS_AS(stage_ops(PipelineSchedule::kGpipe, 2, 2, 4), std::invalid_argument);
}

TEST_CASE("pipeline schedules: GPipe and 1F1B leave the analytic bubble, 1F1B holds fewer activations",
          "[parallel]") {
  for (int p : {2, 4})
    for (int m : {4, 8}) {
      const std::vector<double> forward(static_cast<std::size_t>(p), 1.0), backward(static_cast<std::size_t>(p), 2.0);
      for (auto schedule : {PipelineSchedule::kGpipe, PipelineSchedule::kOneFOneB}) {
        const auto t = simulate(schedule, m, forward, backward);
        INFO(to_string(schedule) << " p " << p << " m " << m);
        CHECK(t.step_time == Approx(3.0 * (m + p - 1)));
        for (int s = 0; s < p; ++s) {
          CHECK(t.bubble(s) == Approx(analytic_bubble(p, m)));
          const int held = schedule == PipelineSchedule::kGpipe ? m : std::min(p - s, m);
          CHECK(t.peak_inflight[static_cast<std::size_t>(s)] == held);
        }
      }
    }
  CHECK(analytic_bubble(4, 8) == Approx(3.0 / 11.0));
}

TEST_CASE("pipeline schedules: a slow stage sets the pace and the others wait for it", "[parallel]") {
  // Stage 1 of 2 takes twice as long (a straggler): the step is bound by it, and stage 0's
  // share of waiting grows past the analytic bubble while stage 1's falls below it.
  const auto t = simulate(PipelineSchedule::kOneFOneB, 8, {1.0, 2.0}, {2.0, 4.0});
  CHECK(t.bubble(0) > analytic_bubble(2, 8));
  CHECK(t.bubble(1) < analytic_bubble(2, 8));
  CHECK(t.step_time >= 8 * 6.0);
}

}  // namespace parallel_layout_test

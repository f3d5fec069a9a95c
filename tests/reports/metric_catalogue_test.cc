// The catalogue's display hints: reporters pick and order metrics by them, so these pin
// the orders the reports have always shown and the latency guess kept for metrics outside
// the catalogue.
#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <vector>

#include "common/metrics/metric_catalogue.h"
#include "reports/render/html/chart_data.h"

namespace metric_catalogue_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

namespace {

using chaosbench::common::MetricDisplay;

std::vector<std::string> names_ranked_by(int MetricDisplay::*rank) {
  std::vector<std::string> out;
  for (const auto* m : chaosbench::common::metrics_ranked_by(rank)) out.emplace_back(m->name);
  return out;
}

}  // namespace

TEST_CASE("metric catalogue: names are unique and each display rank is used once", "[catalogue]") {
  std::set<std::string_view> names;
  for (const auto& m : chaosbench::common::metric_catalogue()) CHECK(names.insert(m.name).second);
  for (auto rank : {&MetricDisplay::key_rank, &MetricDisplay::timeline_rank, &MetricDisplay::sweep_column,
                    &MetricDisplay::sweep_objective}) {
    std::set<int> seen;
    for (const auto& m : chaosbench::common::metric_catalogue())
      if (m.display.*rank > 0) CHECK(seen.insert(m.display.*rank).second);
  }
}

TEST_CASE("metric catalogue: key metrics and key timelines in the reports' order", "[catalogue]") {
  CHECK(names_ranked_by(&MetricDisplay::key_rank) ==
        std::vector<std::string>{
            "train/throughput", "train/step_time", "train/compute_time", "train/comm_time", "train/overlap",
            "train/mfu", "train/mfu_hw", "train/rank_imbalance", "train/straggler_score", "train/pipeline_bubble",
            "train/loss",
            "train/time_to_target", "resilience/goodput", "resilience/badput", "resilience/time_to_detect",
            "resilience/time_to_recover", "resilience/lost_steps", "resilience/throughput_retention",
            "resilience/restarts", "ckpt/save_time", "ckpt/restore_time", "comm/busbw", "comm/latency",
            "infer/throughput", "infer/latency", "infer/error_rate", "infer/ttft", "infer/tpot",
            "infer/output_tokens_per_s", "infer/request_goodput", "infer/slo_attainment", "compute/gemm_tflops",
            "compute/peak_tflops", "compute/mem_bw"});
  CHECK(names_ranked_by(&MetricDisplay::timeline_rank) ==
        std::vector<std::string>{"train/throughput", "train/step_time", "train/loss", "comm/latency", "comm/busbw",
                                 "infer/latency", "infer/throughput", "train/comm_time", "train/compute_time",
                                 "infer/ttft", "infer/output_tokens_per_s", "infer/request_goodput"});
}

TEST_CASE("metric catalogue: sweep columns and objectives", "[catalogue]") {
  CHECK(names_ranked_by(&MetricDisplay::sweep_column) ==
        std::vector<std::string>{"train/throughput", "train/step_time", "train/time_to_target", "train/loss_ratio",
                                 "resilience/time_to_recover", "resilience/goodput", "comm/avg_busbw"});
  CHECK(names_ranked_by(&MetricDisplay::sweep_objective) ==
        std::vector<std::string>{"train/time_to_target", "train/throughput", "comm/avg_busbw"});
  for (const auto* m : chaosbench::common::metrics_ranked_by(&MetricDisplay::sweep_objective)) {
    INFO(m->name);
    CHECK(m->better != chaosbench::common::Better::kNone);
    CHECK(chaosbench::common::find_metric(m->display.sweep_proxy) != nullptr);
  }
}

TEST_CASE("metric catalogue: latency-like rows agree with the name guess for outside metrics", "[catalogue]") {
  for (const auto& m : chaosbench::common::metric_catalogue()) {
    INFO(m.name);
    CHECK(m.display.latency_like == chaosbench::reports::html::name_looks_latency_like(m.name));
    if (m.display.latency_like) CHECK((m.unit == "ns" || m.unit == "us" || m.unit == "ms" || m.unit == "s"));
  }
  CHECK(chaosbench::reports::html::name_looks_latency_like("my/rpc_latency"));
  CHECK_FALSE(chaosbench::reports::html::name_looks_latency_like("resilience/my_time"));
}

}  // namespace metric_catalogue_test

#include "bench/llm/load/llm_load_result.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <nlohmann/json.hpp>

#include "common/values/percentile.h"

namespace chaosbench::bench::llm {

std::optional<double> LlmLoadResult::attainment() const {
  const auto finished = completed + failed;
  if (finished == 0) return std::nullopt;
  return 100.0 * static_cast<double>(attained) / static_cast<double>(finished);
}

namespace {

nlohmann::json distribution(const std::vector<double>& v) {
  if (v.empty()) return nullptr;
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  auto round3 = [](double x) { return std::round(x * 1000) / 1000; };
  std::vector<double> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  auto at = [&](double p) { return round3(common::percentile_sorted(sorted, p)); };
  return {{"n", v.size()}, {"mean", round3(mean)}, {"p50", at(50)}, {"p90", at(90)}, {"p99", at(99)}};
}

}  // namespace

std::string format_llm_load_summary(const LlmLoadResult& r) {
  nlohmann::json j{{"llm_load", "summary"},
                   {"elapsed_s", r.elapsed_s},
                   {"issued", r.issued},
                   {"completed", r.completed},
                   {"failed", r.failed},
                   {"failovers", r.failovers},
                   {"failures", r.failures},
                   {"output_tokens", r.output_tokens},
                   {"throughput_req_s", r.throughput()},
                   {"output_tokens_per_s", r.tokens_per_s()},
                   {"token_chunks_per_s", r.chunks_per_s()},
                   {"request_goodput", r.goodput()},
                   {"slo_attainment", r.attainment() ? nlohmann::json(*r.attainment()) : nlohmann::json(nullptr)},
                   {"ttft_ms", distribution(r.ttft_ms)},
                   {"tpot_ms", distribution(r.tpot_ms)},
                   {"itl_ms", distribution(r.itl_ms)},
                   {"e2e_ms", distribution(r.e2e_ms)},
                   {"send_lag_ms", distribution(r.send_lag_ms)},
                   {"first_byte_ms", distribution(r.first_byte_ms)},
                   {"itl_gaps", r.itl_gaps},
                   {"itl_samples_sent", r.itl_sent}};
  return j.dump();
}

}  // namespace chaosbench::bench::llm

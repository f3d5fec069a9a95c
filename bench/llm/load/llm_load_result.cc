#include "bench/llm/load/llm_load_result.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <nlohmann/json.hpp>

namespace chaosbench::bench::llm {

std::optional<double> LlmLoadResult::attainment() const {
  const auto finished = completed + failed;
  if (finished == 0) return std::nullopt;
  return 100.0 * static_cast<double>(attained) / static_cast<double>(finished);
}

std::optional<double> percentile(std::vector<double> values, double p) {
  if (values.empty()) return std::nullopt;
  const double rank = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(rank));
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(lo), values.end());
  const double low = values[lo];
  if (lo + 1 >= values.size()) return low;
  const double high = *std::min_element(values.begin() + static_cast<std::ptrdiff_t>(lo) + 1, values.end());
  return low + (high - low) * (rank - static_cast<double>(lo));
}

namespace {

nlohmann::json distribution(const std::vector<double>& v) {
  if (v.empty()) return nullptr;
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  auto round3 = [](double x) { return std::round(x * 1000) / 1000; };
  return {{"n", v.size()}, {"mean", round3(mean)}, {"p50", round3(*percentile(v, 50))},
          {"p90", round3(*percentile(v, 90))}, {"p99", round3(*percentile(v, 99))}};
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

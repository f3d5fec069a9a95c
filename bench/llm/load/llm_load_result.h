// What one LLM load run (or one find_peak trial) measured, a plain value: counts, the
// per-request latencies in milliseconds (every request's TTFT, TPOT and e2e; ITL gaps kept
// whole up to a bound, then as a seeded uniform reservoir), failures by kind and the SLO
// figures. format_llm_load_summary prints it as one JSON line for the end of a run.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace chaosbench::bench::llm {

struct LlmLoadResult {
  double elapsed_s = 0;  // from the clock's start to the last request's end
  std::int64_t issued = 0;
  std::int64_t completed = 0;
  std::int64_t failed = 0;
  std::int64_t failovers = 0;  // attempts moved to another endpoint after a connect failure
  std::map<std::string, std::int64_t> failures;  // by to_string(StreamFailure)
  std::int64_t output_tokens = 0;  // of completed requests
  std::int64_t token_chunks = 0;   // token-carrying events of completed requests
  std::int64_t itl_gaps = 0;       // every gap measured
  std::int64_t itl_sent = 0;       // gaps sent as infer/itl samples
  std::int64_t attained = 0;       // requests within every SLO bound
  std::vector<double> ttft_ms, tpot_ms, e2e_ms;  // completed requests
  std::vector<double> send_lag_ms;    // completed requests: actual send − scheduled, the client's own delay
  std::vector<double> first_byte_ms;  // completed requests: first answer byte − scheduled (the head: admission)
  std::vector<double> itl_ms;                    // all gaps, or a uniform sample of them

  double throughput() const { return elapsed_s > 0 ? static_cast<double>(completed) / elapsed_s : 0; }
  double goodput() const { return elapsed_s > 0 ? static_cast<double>(attained) / elapsed_s : 0; }
  double tokens_per_s() const { return elapsed_s > 0 ? static_cast<double>(output_tokens) / elapsed_s : 0; }
  double chunks_per_s() const { return elapsed_s > 0 ? static_cast<double>(token_chunks) / elapsed_s : 0; }
  // 100 × attained / (completed + failed); absent when nothing finished.
  std::optional<double> attainment() const;
};

// One JSON object on one line: counts, rates, p50/p90/p99 (common/values/percentile.h) and mean
// of ttft, tpot, itl, e2e in ms, failures by kind.
std::string format_llm_load_summary(const LlmLoadResult& result);

}  // namespace chaosbench::bench::llm

// Turns the LLM load generator's finished requests into metrics for the harness and an
// LlmLoadResult. Per finished request: infer/ttft, infer/tpot (streaming only: not
// streamed, TPOT is meaningless) and infer/e2e_latency samples in ms for completed
// requests, and its ITL gaps as infer/itl samples. Per window: infer/output_tokens_per_s
// (output tokens of the requests completed in it),
// infer/request_goodput, infer/throughput (completed/s), infer/error_rate (failed /
// finished, %), infer/slo_attainment (only when something finished) and
// infer/failed_streams (one sample per failure kind seen, label `reason`).
//
// ITL volume: at 50,000 chunks/s one sample per gap would be most of the harness's record
// budget, so at most `itl_budget_per_s` gaps a second are sent. Every 100 ms the sampling
// probability is set to budget / (the last 100 ms's gap rate), capped at 1, and each gap
// is sent with it from a generator seeded by `seed`: a uniform subsample while the rate is
// steady. When a window sent fewer than all its gaps, an `llm_itl_sampling` event says the
// fraction. The summary's ITL percentiles use every gap (a seeded reservoir past 2^21).
// Threads: the generator's loop thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <random>
#include <string>

#include "bench/llm/load/goodput_tally.h"
#include "bench/llm/load/llm_load_result.h"
#include "bench/llm/stream/stream_timing.h"
#include "bench/llm/load/llm_metrics_queue.h"

namespace chaosbench::bench::llm {

struct LlmRecorderOptions {
  Slo slo;
  bool stream = true;
  std::chrono::nanoseconds window{std::chrono::seconds(1)};
  double itl_budget_per_s = 10000;
  std::uint64_t seed = 1;
  bool send_samples = true;  // false: find_peak trials report only their own events
};

class LlmLoadRecorder {
 public:
  using Clock = std::chrono::steady_clock;

  LlmLoadRecorder(LlmMetricsQueue& metrics, LlmRecorderOptions options, Clock::time_point start);

  void issued() { ++result_.issued; }
  void finished(const StreamTiming& timing, Clock::time_point now);
  // Closes the windows `now` has passed and adapts the ITL sampling. Cheap; call often.
  void tick(Clock::time_point now);
  // Closes the last partial window, flushes, and returns the run's result.
  LlmLoadResult finish(Clock::time_point now);

  const LlmLoadResult& result() const { return result_; }

 private:
  struct Window {
    std::int64_t completed = 0, failed = 0, tokens = 0, itl_gaps = 0, itl_sent = 0;
    std::map<std::string, std::int64_t> failures;
  };
  void record_itl(const StreamTiming& timing);
  void keep_itl(double ms);
  void close_window(double length_s);

  LlmMetricsQueue& metrics_;
  LlmRecorderOptions options_;
  Clock::time_point start_, window_end_, next_adapt_;
  LlmLoadResult result_;
  GoodputTally window_tally_, total_tally_;
  Window window_;
  std::int64_t recent_gaps_ = 0;  // since the last adaptation
  double itl_probability_ = 1;
  std::mt19937_64 rng_;
};

}  // namespace chaosbench::bench::llm

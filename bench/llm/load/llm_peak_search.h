// find_peak for the LLM load generator: trials of settings.find_peak->trial each, open-loop
// Poisson at the rate find_peak.h chooses, each trial's SLO attainment from its own
// GoodputTally (llm_load_recorder.h). Per trial an `llm_peak_trial {rate, attainment
// (absent when nothing finished), passed (1 or 0)}` event; at the end infer/peak_rate samples (label bound=low: the highest passing
// rate; bound=high: the lowest failing) and an `llm_peak {low, high, stop, trials}` event.
// Trials send no per-request samples: their load is a probe, not the phase's measurement.
// Blocking; the caller's thread. `stop` set: the search ends after the current trial,
// with the bracket as far as it got (stop kStopped).
#pragma once

#include <atomic>

#include "bench/llm/load/find_peak.h"
#include "bench/llm/load/llm_load_generator.h"
#include "bench/protocol/metrics_client.h"

namespace chaosbench::bench::llm {

// `plan.settings.find_peak` must be set (std::invalid_argument otherwise).
PeakResult run_llm_peak_search(const LlmLoadPlan& plan, MetricsClient& metrics, const std::atomic<bool>& stop);

// "peak: between 12.5 and 13.1 req/s (converged, 7 trials)" and the like.
std::string describe_peak(const PeakResult& result);

}  // namespace chaosbench::bench::llm

// A serving SLO (`slo: {ttft, tpot, e2e}`, each optional) and the judgement of one
// request against it. Aggregation over a window or phase is goodput_tally.h.
//
// The judgement is DistServe's (Zhong et al., OSDI 2024, "DistServe: Disaggregating
// Prefill and Decoding for Goodput-optimized LLM Serving"): a request attains the SLO when
// it meets every given bound, and goodput is the rate of such requests. As in vLLM's
// benchmark_serving `--goodput`, a bound is met when the value is at most the bound
// (inclusive), and a request with 0 or 1 output token has TPOT 0 (it meets any TPOT
// bound). A failed request never attains the SLO, whatever its timings.
#pragma once

#include <optional>

#include "bench/llm/stream/stream_timing.h"
#include "common/values/units.h"

namespace chaosbench::bench::llm {

struct Slo {
  std::optional<common::Duration> ttft;
  std::optional<common::Duration> tpot;
  std::optional<common::Duration> e2e;

  // No bound at all: every completed request attains it.
  bool empty() const { return !ttft && !tpot && !e2e; }
};

// Each field is true when its bound is absent or met.
struct SloCheck {
  bool completed = false;  // the request did not fail
  bool ttft = true;
  bool tpot = true;
  bool e2e = true;
  bool attained() const { return completed && ttft && tpot && e2e; }
};

// A completed request with no token has no TTFT; it fails a TTFT bound (nothing reached
// the user) but nothing else.
SloCheck check_slo(const Slo& slo, const StreamTiming& timing);

}  // namespace chaosbench::bench::llm

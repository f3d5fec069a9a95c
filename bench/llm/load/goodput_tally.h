// Counts requests against an SLO over a window or a phase and gives the two catalogue
// figures: infer/request_goodput (requests per second that attained every bound, as
// DistServe defines goodput; see slo.h) and infer/slo_attainment (attained / finished, %,
// DistServe's "SLO attainment"). Requests are counted when they finish (completed or
// failed), as the load recorder counts its windows; a request still in flight belongs to
// the window it finishes in. One thread at a time.
#pragma once

#include <cstdint>
#include <optional>

#include "bench/llm/load/slo.h"
#include "bench/llm/stream/stream_timing.h"

namespace chaosbench::bench::llm {

class GoodputTally {
 public:
  explicit GoodputTally(Slo slo) : slo_(slo) {}

  // Judges one finished request and counts it; returns the judgement.
  SloCheck add(const StreamTiming& timing);
  void clear();  // keeps the SLO

  std::int64_t finished() const { return finished_; }  // completed + failed
  std::int64_t completed() const { return completed_; }
  std::int64_t failed() const { return finished_ - completed_; }
  std::int64_t attained() const { return attained_; }
  // Requests that completed but missed each bound (a request may miss several).
  std::int64_t missed_ttft() const { return missed_ttft_; }
  std::int64_t missed_tpot() const { return missed_tpot_; }
  std::int64_t missed_e2e() const { return missed_e2e_; }

  // attained / `duration_s` (the window's or phase's length); 0 for a duration <= 0.
  double request_goodput(double duration_s) const;
  // 100 × attained / finished; absent when nothing finished (no evidence either way, so
  // find_peak and the reports must not read it as 0 % or 100 %).
  std::optional<double> slo_attainment() const;

 private:
  Slo slo_;
  std::int64_t finished_ = 0, completed_ = 0, attained_ = 0;
  std::int64_t missed_ttft_ = 0, missed_tpot_ = 0, missed_e2e_ = 0;
};

}  // namespace chaosbench::bench::llm

#include "bench/llm/load/goodput_tally.h"

namespace chaosbench::bench::llm {

SloCheck GoodputTally::add(const StreamTiming& timing) {
  const SloCheck c = check_slo(slo_, timing);
  ++finished_;
  if (c.completed) {
    ++completed_;
    missed_ttft_ += c.ttft ? 0 : 1;
    missed_tpot_ += c.tpot ? 0 : 1;
    missed_e2e_ += c.e2e ? 0 : 1;
  }
  if (c.attained()) ++attained_;
  return c;
}

void GoodputTally::clear() { *this = GoodputTally(slo_); }

double GoodputTally::request_goodput(double duration_s) const {
  return duration_s > 0 ? static_cast<double>(attained_) / duration_s : 0.0;
}

std::optional<double> GoodputTally::slo_attainment() const {
  if (finished_ == 0) return std::nullopt;
  return 100.0 * static_cast<double>(attained_) / static_cast<double>(finished_);
}

}  // namespace chaosbench::bench::llm

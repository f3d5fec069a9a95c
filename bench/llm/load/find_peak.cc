#include "bench/llm/load/find_peak.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace chaosbench::bench::llm {
namespace {

void check(const FindPeakOptions& o) {
  if (!(o.start_rate > 0) || !(o.min_rate > 0) || !(o.max_rate >= o.min_rate))
    throw std::invalid_argument("find_peak: rates must satisfy 0 < min_rate <= max_rate and start_rate > 0");
  if (!(o.relative_precision > 0)) throw std::invalid_argument("find_peak: relative_precision must be > 0");
  if (o.max_trials == 0) throw std::invalid_argument("find_peak: max_trials must be at least 1");
}

class Search {
 public:
  Search(const std::function<std::optional<double>(double)>& trial, const FindPeakOptions& o) : trial_(trial), o_(o) {}

  bool run(double rate) {
    PeakTrial t{rate, trial_(rate), false};
    t.passed = t.attainment && *t.attainment >= o_.target_attainment;
    result_.trials.push_back(t);
    if (t.passed) {
      result_.highest_passing = std::max(result_.highest_passing.value_or(rate), rate);
    } else {
      result_.lowest_failing = std::min(result_.lowest_failing.value_or(rate), rate);
    }
    return t.passed;
  }
  bool out_of_trials() const { return result_.trials.size() >= o_.max_trials; }
  bool bracketed() const { return result_.highest_passing && result_.lowest_failing; }
  bool narrow() const {
    return (*result_.lowest_failing - *result_.highest_passing) <= o_.relative_precision * *result_.highest_passing;
  }
  const PeakResult& peek() const { return result_; }
  PeakResult finish(PeakStop stop) {
    result_.stop = stop;
    return std::move(result_);
  }

 private:
  const std::function<std::optional<double>(double)>& trial_;
  const FindPeakOptions& o_;
  PeakResult result_;
};

}  // namespace

std::string to_string(PeakStop stop) {
  switch (stop) {
    case PeakStop::kConverged: return "converged";
    case PeakStop::kNothingFails: return "nothing_fails";
    case PeakStop::kNothingPasses: return "nothing_passes";
    case PeakStop::kMaxTrials: return "max_trials";
    case PeakStop::kStopped: return "stopped";
  }
  return "unknown";
}

PeakResult find_peak(const std::function<std::optional<double>(double rate)>& trial, const FindPeakOptions& o) {
  check(o);
  Search s(trial, o);
  double rate = std::clamp(o.start_rate, o.min_rate, o.max_rate);
  const bool first_passed = s.run(rate);
  // Bracket: double while passing, halve while failing.
  while (!s.bracketed()) {
    if (s.out_of_trials()) return s.finish(PeakStop::kMaxTrials);
    if (first_passed) {
      if (rate >= o.max_rate) return s.finish(PeakStop::kNothingFails);
      rate = std::min(rate * 2, o.max_rate);
    } else {
      if (rate <= o.min_rate) return s.finish(PeakStop::kNothingPasses);
      rate = std::max(rate / 2, o.min_rate);
    }
    s.run(rate);
  }
  // Bisect: the pass and the fail close in on the peak.
  while (!s.narrow()) {
    if (s.out_of_trials()) return s.finish(PeakStop::kMaxTrials);
    const PeakResult& r = s.peek();
    s.run((*r.highest_passing + *r.lowest_failing) / 2);
  }
  return s.finish(PeakStop::kConverged);
}

}  // namespace chaosbench::bench::llm

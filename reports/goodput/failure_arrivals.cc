#include "reports/goodput/failure_arrivals.h"

#include <algorithm>
#include <cmath>

namespace chaosbench::reports {

double open_unit(SplitMix64& rng) { return (static_cast<double>(rng.next() >> 11) + 0.5) * 0x1.0p-53; }

FailureArrivals::Model FailureArrivals::Model::with_mean(GoodputInputs::Process process, double mean_s,
                                                         double shape) {
  Model m;
  m.process = process;
  m.shape = process == GoodputInputs::Process::kWeibull ? shape : 1;
  m.scale_s = process == GoodputInputs::Process::kWeibull ? mean_s / weibull_mean(1, shape) : mean_s;
  return m;
}

double inter_arrival_s(SplitMix64& rng, bool weibull, double scale_s, double shape) {
  // Inversion: -ln U is exponential with mean 1; its 1/k-th power is Weibull with shape k.
  const double e = -std::log(open_unit(rng));
  return weibull ? scale_s * std::pow(e, 1 / shape) : scale_s * e;
}

double FailureArrivals::draw_gap() {
  return inter_arrival_s(rng_, model_.process == GoodputInputs::Process::kWeibull, model_.scale_s, model_.shape);
}

double FailureArrivals::next() {
  if (!started_) {
    arrival_s_ = model_.offset_s;
    started_ = true;
  }
  for (;;) {
    if (drawn_ >= model_.max_occurrences) return std::numeric_limits<double>::infinity();
    arrival_s_ += draw_gap();
    ++drawn_;
    // The gap's draw comes first, then the probability's, so that with probability 1 the
    // stream is the gaps alone.
    if (model_.probability < 1 && open_unit(rng_) >= model_.probability) continue;
    applied_s_ = std::max(arrival_s_, applied_s_ + model_.dead_time_s);
    return applied_s_;
  }
}

}  // namespace chaosbench::reports

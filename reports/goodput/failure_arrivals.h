// The times at which failures hit a simulated job (goodput_simulation.h), drawn as
// chaosbench's fault schedule draws a soak's arrivals: occurrences at `offset` plus the
// running sum of independent inter-arrival times (exponential, or Weibull: a renewal
// process in arrival time that no recovery resets), each firing with `probability` (one
// that does not fire is no occurrence at all), one applied at a time: an arrival within
// `dead_time` of the previous applied one is deferred to that time; `max_occurrences`
// arrivals are drawn at most, fired or not (harness/plan/schedule_plan.cc).
// Deterministic for a seed (SplitMix64).
#pragma once

#include <cstdint>
#include <limits>

#include "reports/goodput/goodput_inputs.h"
#include "reports/stats/split_mix64.h"

namespace chaosbench::reports {

class FailureArrivals {
 public:
  struct Model {
    GoodputInputs::Process process = GoodputInputs::Process::kPoisson;
    double scale_s = 1;   // poisson: the mean; weibull: the scale
    double shape = 1;     // weibull only
    double offset_s = 0;  // the first inter-arrival time counts from here
    double dead_time_s = 0;
    long max_occurrences = std::numeric_limits<long>::max();
    double probability = 1;

    // A job-level process with this mean time between failures (Weibull: the scale that
    // gives that mean).
    static Model with_mean(GoodputInputs::Process process, double mean_s, double shape);
  };

  FailureArrivals(const Model& model, std::uint64_t seed) : model_(model), rng_(seed) {}

  // The next applied failure's time (seconds since the job started); +infinity once
  // max_occurrences have been applied.
  double next();

 private:
  double draw_gap();

  Model model_;
  SplitMix64 rng_;
  double arrival_s_ = 0;  // the last arrival drawn (before deferral)
  double applied_s_ = -std::numeric_limits<double>::infinity();
  long drawn_ = 0;
  bool started_ = false;
};

// A uniform draw in (0, 1), never 0 or 1: (the top 53 bits + 1/2) / 2^53.
double open_unit(SplitMix64& rng);

// One inter-arrival time by inversion: exponential with mean `scale_s`, or Weibull with
// that scale and `shape`. The one draw both the fault schedule (a soak's arrivals) and
// the goodput model's simulation use.
double inter_arrival_s(SplitMix64& rng, bool weibull, double scale_s, double shape);

}  // namespace chaosbench::reports

// The two uses of the simulated job (goodput_simulation.h): the steady state of a long
// job (one job run until failure number `failures` arrives: the ratios converge as
// 1/sqrt(failures)), the interval that maximises it, and the spread of one finite job's
// goodput over many simulated jobs (a prediction interval). Deterministic for a seed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "reports/goodput/goodput_simulation.h"

namespace chaosbench::reports {

// The steady state's size: with 50,000 failures the standard deviation of goodput over
// 20 seeds was at most 0.19 point for goodputs from 5 % to 94 % (docs/goodput-model.md;
// 0.24 with 20,000), at a few milliseconds per estimate.
inline constexpr long kSteadyStateFailures = 50000;

struct SteadyState {
  double goodput = 0;  // work / wall, a fraction
  double ettr = 0;     // work / (wall - startup); with no startup, goodput
  double saves = 0, lost = 0, downtime = 0;  // shares of the wall time
  long failures = 0;
};

// `setup` with its work unbounded and max_failures = `failures`.
SteadyState steady_state(SimulationSetup setup, long failures, std::uint64_t seed);

struct IntervalPoint {
  double interval_s = 0;
  double goodput = 0;
};

struct MonteCarloOptimum {
  double interval_s = 0;
  double goodput = 0;
  std::vector<IntervalPoint> scan;  // every interval tried, ascending
};

// The steady state's best interval, all with one seed (common random numbers: the same
// failures at every interval, so the differences are the interval's): 13 intervals
// spaced by a factor sqrt(2) around `start_s` (Daly's), x1/8 .. x8; the grid's best and
// its neighbours are filled in by 8 more between them each; a parabola through the best
// of those and its two neighbours (in log interval) gives the optimum, evaluated once
// more. The best interval tried wins if the parabola's is worse.
MonteCarloOptimum find_optimal_interval(const SimulationSetup& setup, double start_s, long failures,
                                        std::uint64_t seed);

// The goodput of one job of `setup.work_s` (and its startup) over `jobs` simulated jobs,
// each with its own arrivals (seeds from one SplitMix64 stream).
struct JobPrediction {
  std::size_t jobs = 0;
  double low = 0, median = 0, high = 0;  // goodput's 2.5 %, 50 % and 97.5 % quantiles, fractions
  double ettr_low = 0, ettr_median = 0, ettr_high = 0;
  double mean_failures = 0;
  std::vector<double> goodputs;  // every job's, in simulation order
};
JobPrediction predict_job(const SimulationSetup& setup, std::size_t jobs, std::uint64_t seed);

}  // namespace chaosbench::reports

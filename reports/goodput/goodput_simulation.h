// One simulated training job under failures: the mechanism both the closed forms
// (goodput_closed_form.h) and a real run follow, played out event by event. The job
// starts up once (S), then works in segments of tau seconds, each followed by a blocking
// save of C. A failure (failure_arrivals.h) loses work: everything since the last
// completed save (checkpoint mode: a save in progress is lost too) or the failure's
// recompute (memory mode); then a downtime R = detect + restart + restore passes, which
// a further failure restarts from zero (with that failure's own costs); then work
// resumes. A failure during the startup costs its downtime and the startup goes on. A
// failure's downtime includes its rejoin (goodput_inputs.h).
// Each failure's costs are fixed, or drawn with replacement from measured failures (a
// bootstrap), from a stream of their own: the k-th failure gets the k-th draw whatever
// the interval, so runs at different intervals share their random numbers.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "reports/goodput/failure_arrivals.h"
#include "reports/goodput/goodput_inputs.h"

namespace chaosbench::reports {

struct SimulationSetup {
  double interval_s = 1;  // tau
  double cost_s = 0;      // C
  GoodputInputs::LostWork lost_work = GoodputInputs::LostWork::kCheckpoint;
  GoodputInputs::FailureCost fixed_cost;                  // when `bootstrap` is empty
  std::vector<GoodputInputs::FailureCost> bootstrap = {};  // drawn from when not empty
  FailureArrivals::Model arrivals;
  double startup_s = 0;
  // The job ends when `work_s` of work is done, or when failure number `max_failures`
  // arrives (the steady state: that failure is not processed), whichever comes first.
  double work_s = std::numeric_limits<double>::infinity();
  long max_failures = std::numeric_limits<long>::max();
};

// Where one job's wall time went. wall = startup + work + downtime + lost + saves.
struct SimulatedJob {
  double wall_s = 0;
  double work_s = 0;      // productive work kept
  double startup_s = 0;
  double downtime_s = 0;  // detect + restart + restore, restarted ones included
  double lost_s = 0;      // work done and lost, and saves cut short by a failure
  double saves_s = 0;     // completed saves (and one in progress when the job stops)
  long failures = 0;

  double goodput() const { return wall_s > 0 ? work_s / wall_s : 0; }
  // Work / (wall - startup), as resilience/ettr measures it (from the first rank's start):
  // 1 - the share of the job's own time lost to failures and saves. The startup weighs on
  // goodput() only.
  double ettr() const { return wall_s > startup_s ? work_s / (wall_s - startup_s) : 0; }
};

SimulatedJob simulate_job(const SimulationSetup& setup, std::uint64_t seed);

}  // namespace chaosbench::reports

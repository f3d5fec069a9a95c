#include "reports/goodput/goodput_simulation.h"

#include <algorithm>
#include <cmath>

namespace chaosbench::reports {
namespace {

// The cost stream's seed differs from the arrivals' by a fixed constant (the fractional
// digits of pi), so the two streams never coincide.
constexpr std::uint64_t kCostStream = 0x243f6a8885a308d3ULL;

// Times are kept relative to the next failure (to_failure_), never as a sum onto the wall
// clock: after a single node's MTBF times 50,000 failures the wall clock is near 1e12 s,
// where a step of a microsecond no longer changes it, but a step always changes the time
// left to a failure once whole cycles have been skipped, so every loop ends.
class JobSimulation {
 public:
  JobSimulation(const SimulationSetup& setup, std::uint64_t seed)
      : s_(setup), arrivals_(setup.arrivals, seed), costs_(seed ^ kCostStream), startup_left_(setup.startup_s) {
    to_failure_ = arrivals_.next();
  }

  SimulatedJob run() {
    while (!done_) {
      if (startup_left_ > 0) startup();
      else if (saving_) save();
      else work();
    }
    return job_;
  }

 private:
  // Spends `dt` (at most to_failure_) of wall time.
  void pass(double dt) {
    job_.wall_s += dt;
    to_failure_ -= dt;
  }

  void startup() {
    const double step = std::min(startup_left_, to_failure_);
    pass(step);
    job_.startup_s += step;
    startup_left_ -= step;
    if (startup_left_ > 0) fail();
  }

  void save() {
    if (to_failure_ >= s_.cost_s) {
      pass(s_.cost_s);
      job_.saves_s += s_.cost_s;
      saving_ = false;
      since_ = 0;
      committed_ = job_.work_s;
      return;
    }
    save_elapsed_ = to_failure_;
    pass(to_failure_);
    fail();
  }

  // Whole segment-and-save cycles that end before the next failure, in one step: a
  // single node's MTBF holds millions of them.
  void skip_cycles() {
    const double cycle = s_.interval_s + s_.cost_s;
    // The job's last segment ends it without a save: work() does it.
    double k = std::min(std::floor(to_failure_ / cycle), std::ceil((s_.work_s - job_.work_s) / s_.interval_s) - 1);
    if (!std::isfinite(k)) {  // no failure will come and the work never ends: nothing changes any more
      done_ = true;
      return;
    }
    if (k < 1) return;
    job_.wall_s += k * cycle;
    to_failure_ = std::max(0.0, to_failure_ - k * cycle);
    job_.work_s += k * s_.interval_s;
    job_.saves_s += k * s_.cost_s;
    committed_ = job_.work_s;
  }

  void work() {
    if (since_ == 0) skip_cycles();
    if (done_) return;
    const double to_save = s_.interval_s - since_, to_end = s_.work_s - job_.work_s;
    const bool ends_job = to_end <= to_save;
    const double segment = ends_job ? to_end : to_save;
    if (to_failure_ >= segment) {
      pass(segment);
      if (ends_job) {
        job_.work_s = s_.work_s;
        done_ = true;
        return;
      }
      job_.work_s += segment;
      since_ = s_.interval_s;
      saving_ = true;
      return;
    }
    job_.work_s += to_failure_;
    since_ += to_failure_;
    pass(to_failure_);
    fail();
  }

  const GoodputInputs::FailureCost& draw_cost() {
    return s_.bootstrap.empty() ? s_.fixed_cost : s_.bootstrap[costs_.below(s_.bootstrap.size())];
  }

  // Counts the failure that arrives now; false when it is the one the job stops at.
  bool arrive() {
    if (job_.failures + 1 >= s_.max_failures) {
      if (saving_) job_.saves_s += save_elapsed_;
      done_ = true;
      return false;
    }
    ++job_.failures;
    return true;
  }

  void fail() {
    if (!arrive()) return;
    const auto& cost = draw_cost();
    lose_work(cost);
    downtime(cost.downtime_s());
  }

  void lose_work(const GoodputInputs::FailureCost& cost) {
    if (saving_) job_.lost_s += save_elapsed_;  // a save cut short is lost in both modes
    saving_ = false;
    save_elapsed_ = 0;
    double lost = 0;
    if (s_.lost_work == GoodputInputs::LostWork::kCheckpoint) {
      lost = job_.work_s - committed_;
      since_ = 0;
    } else {
      lost = std::min(cost.recompute_s, job_.work_s);
      since_ = std::max(0.0, since_ - lost);  // a save cut short is made again
    }
    job_.work_s -= lost;
    job_.lost_s += lost;
  }

  // The downtime after a failure; a failure within it starts a new one with its own costs.
  // The failure times are absolute: the gap to the next is taken from the wall clock once.
  void downtime(double length) {
    for (;;) {
      to_failure_ = std::max(0.0, arrivals_.next() - job_.wall_s);
      if (to_failure_ >= length) {
        pass(length);
        job_.downtime_s += length;
        return;
      }
      job_.downtime_s += to_failure_;
      pass(to_failure_);
      if (!arrive()) return;
      length = draw_cost().downtime_s();
    }
  }

  const SimulationSetup& s_;
  FailureArrivals arrivals_;
  SplitMix64 costs_;
  SimulatedJob job_;
  double to_failure_ = 0;   // wall time left until the next failure
  double startup_left_ = 0;
  double since_ = 0;        // work since the last completed save
  double committed_ = 0;    // work the last completed save holds
  double save_elapsed_ = 0;
  bool saving_ = false;
  bool done_ = false;
};

}  // namespace

SimulatedJob simulate_job(const SimulationSetup& setup, std::uint64_t seed) {
  return JobSimulation(setup, seed).run();
}

}  // namespace chaosbench::reports

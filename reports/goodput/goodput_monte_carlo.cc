#include "reports/goodput/goodput_monte_carlo.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/values/percentile.h"
#include "reports/stats/split_mix64.h"

namespace chaosbench::reports {
namespace {

double steady_goodput(SimulationSetup& setup, double interval_s, long failures, std::uint64_t seed) {
  setup.interval_s = interval_s;
  return steady_state(setup, failures, seed).goodput;
}

// Appends `count` intervals strictly between lo and hi, evenly spaced in log.
void fill_between(std::vector<double>& out, double lo, double hi, int count) {
  for (int i = 1; i <= count; ++i) out.push_back(lo * std::pow(hi / lo, static_cast<double>(i) / (count + 1)));
}

// The vertex of the parabola through (x0, y0), (x1, y1), (x2, y2), x0 < x1 < x2; x1 when
// the three points are on a line or the parabola opens upwards.
double parabola_vertex(double x0, double y0, double x1, double y1, double x2, double y2) {
  const double d0 = (y1 - y0) / (x1 - x0), d1 = (y2 - y1) / (x2 - x1);
  const double curvature = (d1 - d0) / (x2 - x0);
  if (!(curvature < 0)) return x1;
  return (x0 + x1) / 2 - d0 / (2 * curvature);
}

}  // namespace

SteadyState steady_state(SimulationSetup setup, long failures, std::uint64_t seed) {
  setup.work_s = std::numeric_limits<double>::infinity();
  setup.max_failures = failures;
  const auto job = simulate_job(setup, seed);
  SteadyState s;
  s.failures = job.failures;
  if (job.wall_s <= 0) return s;
  s.goodput = job.goodput();
  s.ettr = job.ettr();
  s.saves = job.saves_s / job.wall_s;
  s.lost = job.lost_s / job.wall_s;
  s.downtime = job.downtime_s / job.wall_s;
  return s;
}

MonteCarloOptimum find_optimal_interval(const SimulationSetup& setup, double start_s, long failures,
                                        std::uint64_t seed) {
  SimulationSetup s = setup;
  std::vector<IntervalPoint> scan;
  for (int i = -6; i <= 6; ++i) {
    const double tau = start_s * std::pow(2.0, i / 2.0);
    scan.push_back({tau, steady_goodput(s, tau, failures, seed)});
  }
  auto best = [&scan] {
    return static_cast<std::size_t>(
        std::max_element(scan.begin(), scan.end(),
                         [](const IntervalPoint& a, const IntervalPoint& b) { return a.goodput < b.goodput; }) -
        scan.begin());
  };
  std::size_t b = best();
  std::vector<double> finer;
  if (b > 0) fill_between(finer, scan[b - 1].interval_s, scan[b].interval_s, 8);
  if (b + 1 < scan.size()) fill_between(finer, scan[b].interval_s, scan[b + 1].interval_s, 8);
  for (double tau : finer) scan.push_back({tau, steady_goodput(s, tau, failures, seed)});
  std::sort(scan.begin(), scan.end(),
            [](const IntervalPoint& a, const IntervalPoint& b) { return a.interval_s < b.interval_s; });
  b = best();
  MonteCarloOptimum out{scan[b].interval_s, scan[b].goodput, {}};
  if (b > 0 && b + 1 < scan.size()) {
    const double x = parabola_vertex(std::log(scan[b - 1].interval_s), scan[b - 1].goodput,
                                     std::log(scan[b].interval_s), scan[b].goodput,
                                     std::log(scan[b + 1].interval_s), scan[b + 1].goodput);
    const double tau = std::exp(x);
    const double g = steady_goodput(s, tau, failures, seed);
    if (g >= out.goodput) out = {tau, g, {}};
  }
  out.scan = std::move(scan);
  return out;
}

JobPrediction predict_job(const SimulationSetup& setup, std::size_t jobs, std::uint64_t seed) {
  JobPrediction p;
  p.jobs = jobs;
  SplitMix64 seeds(seed);
  std::vector<double> ettrs;
  double failures = 0;
  for (std::size_t i = 0; i < jobs; ++i) {
    const auto job = simulate_job(setup, seeds.next());
    p.goodputs.push_back(job.goodput());
    ettrs.push_back(job.ettr());
    failures += static_cast<double>(job.failures);
  }
  std::vector<double> goodputs = p.goodputs;
  std::sort(goodputs.begin(), goodputs.end());
  std::sort(ettrs.begin(), ettrs.end());
  p.low = common::percentile_sorted(goodputs, 2.5);
  p.median = common::percentile_sorted(goodputs, 50);
  p.high = common::percentile_sorted(goodputs, 97.5);
  p.ettr_low = common::percentile_sorted(ettrs, 2.5);
  p.ettr_median = common::percentile_sorted(ettrs, 50);
  p.ettr_high = common::percentile_sorted(ettrs, 97.5);
  p.mean_failures = jobs ? failures / static_cast<double>(jobs) : 0;
  return p;
}

}  // namespace chaosbench::reports

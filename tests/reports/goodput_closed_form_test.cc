// The goodput model's closed forms (reports/goodput/goodput_closed_form.h) against values worked
// by hand and Daly's published optima, and the Monte Carlo (reports/goodput/goodput_monte_carlo.h)
// against them: within 0.5 point of Daly's exact expression everywhere for exponential
// failures, within 1 point of the first-order formula wherever the report flags it valid
// (and flagged invalid where (tau + C) / M > 0.2), as docs/goodput-model.md says, and the
// optimum search against the exact minimiser.
#include <catch2/catch.hpp>
#include <cmath>

#include "reports/goodput/goodput_closed_form.h"
#include "reports/goodput/goodput_model.h"
#include "reports/goodput/goodput_monte_carlo.h"
#include "reports/goodput/goodput_run_inputs.h"

namespace goodput_closed_form_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using namespace chaosbench::reports;

namespace {

// Exponential failures with mean `mtbf`, fixed costs: downtime `downtime` (all restart).
SimulationSetup exponential(double interval, double cost, double downtime, double mtbf) {
  SimulationSetup s;
  s.interval_s = interval;
  s.cost_s = cost;
  s.fixed_cost = {0, downtime, 0, 0};
  s.arrivals = FailureArrivals::Model::with_mean(GoodputInputs::Process::kPoisson, mtbf, 1);
  return s;
}

}  // namespace

TEST_CASE("goodput closed forms: Young, Daly and the first-order waste by hand", "[goodput]") {
  // tau = 1 h, C = 30 s, R = 9 min, M = 10 h.
  CHECK(young_interval(30, 36000) == Approx(1469.6938456699068));
  CHECK(daly_interval(30, 36000) == Approx(1449.7618870516508));
  const auto w = first_order_waste(3600, 30, 540, 36000);
  CHECK(w.saves == Approx(30.0 / 3600));
  CHECK(w.rework == Approx(0.05));
  CHECK(w.downtime == Approx(0.015));
  CHECK(w.total() == Approx(0.0733333333));
  CHECK(daly_goodput(3600, 30, 540, 36000) == Approx(0.9285425490696598));
  CHECK(daly_wall_time(7200, 3600, 30, 540, 36000) == Approx(7200 / 0.9285425490696598));
  const auto m = first_order_waste_memory(3600, 30, 540, 12, 36000);
  CHECK(m.total() == Approx(30.0 / 3600 + 12.0 / 36000 + 0.015));
  // C >= 2M: Daly's estimate is M.
  CHECK(daly_interval(100, 40) == 40);
}

TEST_CASE("goodput closed forms: Daly's published optima and the exact minimiser", "[goodput]") {
  // Daly (2006), figs. 3-5: R = 10 min, delta = 5 min; M = 24 h, 6 h, 15 min predict
  // 117, 57 and 9.1 min. Minutes in, minutes out.
  CHECK(daly_interval(5, 1440) == Approx(117).margin(0.5));
  CHECK(daly_interval(5, 360) == Approx(57).margin(0.5));
  CHECK(daly_interval(5, 15) == Approx(9.1).margin(0.05));
  // The minimiser of T_w, 1 + W0(-e^(-1-c)) times M, from SciPy's lambertw.
  CHECK(exact_optimal_interval(5, 1440) == Approx(116.69007332665845).epsilon(1e-9));
  CHECK(exact_optimal_interval(5, 15) == Approx(9.166502820935701).epsilon(1e-9));
  CHECK(exact_optimal_interval(3, 1) == Approx(0.9813393709113166).epsilon(1e-9));
  CHECK(exact_optimal_interval(30, 2.3e7) == Approx(37128.35393279046).epsilon(1e-9));
  // It is the minimum: T_w is higher 1 % either side.
  const double tau = exact_optimal_interval(30, 3600);
  const double at = daly_wall_time(1, tau, 30, 540, 3600);
  CHECK(daly_wall_time(1, tau * 1.01, 30, 540, 3600) > at);
  CHECK(daly_wall_time(1, tau * 0.99, 30, 540, 3600) > at);
}

TEST_CASE("goodput closed forms: where the first-order formula is flagged valid", "[goodput]") {
  CHECK(first_order_validity(first_order_waste(3600, 30, 540, 36000), true).valid);
  // (tau + C) / M = 0.5: invalid, and the reason names the largest term.
  const auto v = first_order_validity(first_order_waste(3600, 30, 540, 7200), true);
  CHECK_FALSE(v.valid);
  CHECK(v.reason.find("lost work") != std::string::npos);
  CHECK_FALSE(first_order_validity(first_order_waste(3600, 30, 540, 36000), false).valid);
}

TEST_CASE("goodput Monte Carlo: within 0.5 point of Daly's exact expression for exponential failures",
          "[goodput]") {
  double worst = 0;
  for (double mtbf : {1e6, 1e5, 2e4, 5000.0, 2000.0, 800.0, 300.0})
    for (double interval : {60.0, 600.0, 3600.0})
      for (double cost : {5.0, 60.0})
        for (double downtime : {30.0, 540.0}) {
          const double mc = steady_state(exponential(interval, cost, downtime, mtbf), 100000, 7).goodput;
          const double daly = daly_goodput(interval, cost, downtime, mtbf);
          worst = std::max(worst, std::abs(mc - daly));
          INFO("M " << mtbf << " tau " << interval << " C " << cost << " R " << downtime);
          CHECK(mc == Approx(daly).margin(0.005));
        }
  WARN("largest |Monte Carlo - Daly exact|: " << 100 * worst << " points");
}

TEST_CASE("goodput model: the Monte Carlo and the first-order formula agree within 1 point where it is valid",
          "[goodput]") {
  // Issue 22's acceptance, through the report itself: every row flagged valid agrees within
  // 1 point; rows where (tau + C) / M > 0.2 are flagged invalid.
  double worst = 0;
  for (double interval : {600.0, 3600.0, 14400.0}) {
    auto in = assumed_goodput_inputs();
    in.checkpoint_interval_s.value = interval;
    GoodputModel model;
    model.steady_failures = 50000;
    model.optimise = false;
    const auto report = model.run(in);
    int valid = 0, invalid = 0;
    for (const auto& row : report.rows) {
      INFO("tau " << interval << " N " << row.nodes << " M " << row.job_mtbf_s);
      if (row.first_order_valid.valid) {
        ++valid;
        worst = std::max(worst, std::abs(row.monte_carlo.goodput - row.first_order));
        CHECK(row.monte_carlo.goodput == Approx(row.first_order).margin(0.01));
      } else {
        ++invalid;
      }
      if ((interval + in.checkpoint_cost_s.value) / row.job_mtbf_s > 0.2) CHECK_FALSE(row.first_order_valid.valid);
    }
    CHECK(valid > 0);
    CHECK(invalid > 0);
  }
  WARN("largest |Monte Carlo - first order| where it is flagged valid: " << 100 * worst << " points");
}

TEST_CASE("goodput Monte Carlo: the optimum search finds the exact minimiser's goodput", "[goodput]") {
  for (double mtbf : {3600.0 * 3.1, 3600.0, 600.0}) {
    const double cost = 30, downtime = 540;
    const auto setup = exponential(3600, cost, downtime, mtbf);
    const auto opt = find_optimal_interval(setup, daly_interval(cost, mtbf), 50000, 3);
    const double exact = exact_optimal_interval(cost, mtbf);
    INFO("M " << mtbf << " MC optimum " << opt.interval_s << " exact " << exact);
    // Goodput is flat near its optimum, so the interval is loose and its goodput tight.
    CHECK(opt.interval_s == Approx(exact).epsilon(0.3));
    CHECK(opt.goodput == Approx(daly_goodput(exact, cost, downtime, mtbf)).margin(0.004));
    CHECK(opt.goodput >= steady_state(exponential(daly_interval(cost, mtbf), cost, downtime, mtbf), 50000, 3).goodput);
    CHECK(opt.scan.size() >= 13);
    CHECK(std::is_sorted(opt.scan.begin(), opt.scan.end(),
                         [](const IntervalPoint& a, const IntervalPoint& b) { return a.interval_s < b.interval_s; }));
  }
}

}  // namespace goodput_closed_form_test

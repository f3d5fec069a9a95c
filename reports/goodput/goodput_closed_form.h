// The closed forms of checkpoint/restart goodput for exponential failures with mean M:
// Young's and Daly's optimal intervals, the first-order waste and Daly's exact expected
// wall time, and where the first-order formula holds. Pure arithmetic, all in seconds;
// docs/goodput-model.md gives the derivations' sources.
#pragma once

#include <string>

namespace chaosbench::reports {

// Young (1974), "A first order approximation to the optimum checkpoint interval",
// CACM 17(9): tau = sqrt(2 C M).
double young_interval(double cost_s, double mtbf_s);

// Daly (2006), "A higher order estimate of the optimum checkpoint interval for restart
// dumps", FGCS 22(3), the perturbation solution: tau = sqrt(2 C M) [1 + 1/3 sqrt(C / 2M) + 1/9 (C / 2M)] - C
// for C < 2M, else tau = M.
double daly_interval(double cost_s, double mtbf_s);

// The interval that minimises daly_wall_time: with u = tau / M and c = C / M, setting the
// derivative to zero gives e^(u + c) (u - 1) = -1, so u = 1 + W0(-e^(-1 - c)) (Lambert W,
// principal branch), the Lambert function Daly's paper also arrives at.
double exact_optimal_interval(double cost_s, double mtbf_s);

// The first-order fraction of wall time lost, by cause. Checkpoint mode (Young's two
// terms plus one downtime R per failure): C / tau for the saves, tau / (2M) for the work
// lost (half a segment per failure), R / M for the downtime. Memory mode (elastic: a
// failure loses only the recompute r): C / tau, r / M, R / M. Goodput = 1 - total().
struct FirstOrderWaste {
  double saves = 0, rework = 0, downtime = 0;
  double total() const { return saves + rework + downtime; }
};
FirstOrderWaste first_order_waste(double interval_s, double cost_s, double downtime_s, double mtbf_s);
FirstOrderWaste first_order_waste_memory(double interval_s, double cost_s, double downtime_s, double recompute_s,
                                         double mtbf_s);

// Daly (2006), the complete cost function: the expected wall time to do `work_s` of work
// in segments of tau, each followed by a save of C, when failures are exponential with
// mean M, a failure loses the segment in progress (and its save) and costs a downtime R
// that failures may also interrupt: T_w = M e^(R/M) (e^((tau + C)/M) - 1) work / tau. Goodput = work / T_w.
double daly_wall_time(double work_s, double interval_s, double cost_s, double downtime_s, double mtbf_s);
double daly_goodput(double interval_s, double cost_s, double downtime_s, double mtbf_s);

// The first-order formula drops every term of second order in tau / M, R / M and C / tau.
// It is flagged valid where its own waste is at most kFirstOrderValidWaste: each of C/tau,
// tau/2M and R/M is then at most 0.1, and (tau + C)/M at most 0.2 (the largest x + c with
// x/2 + c/x <= 0.1, at x = 0.2). Over such inputs it stays within 0.9 point of goodput of
// Daly's exact expression (the worst case: C / tau near 0.1, where C / tau overstates the
// save's share C / (tau + C)). Valid only for exponential failures.
inline constexpr double kFirstOrderValidWaste = 0.10;

struct FirstOrderValidity {
  bool valid = true;
  bool exponential = true;  // false: not valid whatever the waste
  double waste = 0;         // the first-order waste, a fraction
  std::string reason;       // why not: "first-order waste 34% > 10% (downtime 29%)"; "" when valid
};
FirstOrderValidity first_order_validity(const FirstOrderWaste& waste, bool exponential);

}  // namespace chaosbench::reports

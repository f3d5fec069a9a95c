#include "reports/goodput/goodput_closed_form.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace chaosbench::reports {

double young_interval(double cost_s, double mtbf_s) { return std::sqrt(2 * cost_s * mtbf_s); }

double daly_interval(double cost_s, double mtbf_s) {
  if (cost_s >= 2 * mtbf_s) return mtbf_s;
  const double ratio = cost_s / (2 * mtbf_s);
  return std::sqrt(2 * cost_s * mtbf_s) * (1 + std::sqrt(ratio) / 3 + ratio / 9) - cost_s;
}

double exact_optimal_interval(double cost_s, double mtbf_s) {
  // e^(u + c) (u - 1) = -1 is u + c + ln(1 - u) = 0: h(u) = u + c + log1p(-u) falls from
  // c at u = 0 to -inf at u = 1, so its one root is bracketed; log1p keeps the digits where
  // u is tiny (C << M, u near sqrt(2c)). Newton steps, bisection when one leaves the bracket.
  const double c = cost_s / mtbf_s;
  double lo = 0, hi = 1, u = std::min(std::sqrt(2 * c), 0.5);
  for (int i = 0; i < 200; ++i) {
    const double h = u + c + std::log1p(-u);
    (h > 0 ? lo : hi) = u;
    const double slope = -u / (1 - u);
    double next = u - h / slope;
    if (!(next > lo && next < hi)) next = (lo + hi) / 2;
    if (std::abs(next - u) <= 1e-15 * u || hi - lo <= 1e-300) return mtbf_s * next;
    u = next;
  }
  return mtbf_s * u;
}

FirstOrderWaste first_order_waste(double interval_s, double cost_s, double downtime_s, double mtbf_s) {
  return {cost_s / interval_s, interval_s / (2 * mtbf_s), downtime_s / mtbf_s};
}

FirstOrderWaste first_order_waste_memory(double interval_s, double cost_s, double downtime_s, double recompute_s,
                                         double mtbf_s) {
  return {cost_s / interval_s, recompute_s / mtbf_s, downtime_s / mtbf_s};
}

double daly_wall_time(double work_s, double interval_s, double cost_s, double downtime_s, double mtbf_s) {
  // expm1 keeps the digits where (tau + C) / M is tiny (a single node: M of months).
  return mtbf_s * std::exp(downtime_s / mtbf_s) * std::expm1((interval_s + cost_s) / mtbf_s) * work_s / interval_s;
}

double daly_goodput(double interval_s, double cost_s, double downtime_s, double mtbf_s) {
  return interval_s / daly_wall_time(interval_s, interval_s, cost_s, downtime_s, mtbf_s);
}

FirstOrderValidity first_order_validity(const FirstOrderWaste& waste, bool exponential) {
  if (!exponential) return {false, false, waste.total(), "Weibull failures: the closed forms assume exponential ones"};
  if (waste.total() <= kFirstOrderValidWaste) return {true, true, waste.total(), ""};
  // Name the largest of the three terms: the one that made it invalid.
  const double terms[] = {waste.saves, waste.rework, waste.downtime};
  const char* names[] = {"saves", "lost work", "downtime"};
  const auto i = static_cast<std::size_t>(std::max_element(std::begin(terms), std::end(terms)) - std::begin(terms));
  return {false, true, waste.total(), fmt::format("first-order waste {:.3g}% > {:g}% ({} {:.3g}%)", 100 * waste.total(),
                             100 * kFirstOrderValidWaste, names[i], 100 * terms[i])};
}

}  // namespace chaosbench::reports

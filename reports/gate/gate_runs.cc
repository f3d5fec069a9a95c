#include "reports/gate/gate_runs.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "reports/gate/gate_rows.h"
#include "reports/gate/gate_selection.h"
#include "reports/stats/statistics.h"
#include "reports/stats/student_t.h"

namespace chaosbench::reports {
namespace {

using namespace gate_detail;

// The record's figures for `stat`, one per run: a side without per-run values (a single
// run) contributes its own figure once. NaN (a run without the figure) is dropped.
std::vector<double> figures(const MetricRecord& r, const std::string& stat) {
  std::vector<double> raw;
  if (r.runs) raw = stat == "p50" ? r.runs->p50 : stat == "p99" ? r.runs->p99 : r.runs->value;
  else if (stat == "value") raw = {r.value};
  else if (r.stats) raw = {stat == "p50" ? r.stats->p50 : r.stats->p99};
  std::vector<double> out;
  for (double v : raw)
    if (std::isfinite(v)) out.push_back(v);
  return out;
}

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? std::nan("") : s / static_cast<double>(v.size());
}

std::vector<double> logs(const std::vector<double>& v) {
  std::vector<double> out;
  for (double x : v) out.push_back(std::log(x));
  return out;
}

// Fills the statistic, the change, its interval and p from Welch's test: on logs when
// every figure is positive (change = ratio of geometric means - 1), else on the figures.
void test_figures(MetricComparison& m, const std::vector<double>& a, const std::vector<double>& b, double alpha) {
  const bool positive = std::all_of(a.begin(), a.end(), [](double x) { return x > 0; }) &&
                        std::all_of(b.begin(), b.end(), [](double x) { return x > 0; });
  if (positive) {
    m.baseline = std::exp(mean_of(logs(a)));
    m.current = std::exp(mean_of(logs(b)));
  } else {
    m.baseline = mean_of(a);
    m.current = mean_of(b);
  }
  m.change = relative_change(m.baseline, m.current);
  auto w = positive ? welch_t_test(logs(a), logs(b)) : welch_t_test(a, b);
  if (!w) return;
  m.p_value = w->p_value;
  const auto ci = welch_interval(*w, 1.0 - alpha);
  if (positive) {
    m.ci_low = std::expm1(ci.low);
    m.ci_high = std::expm1(ci.high);
  } else if (m.baseline != 0) {
    m.ci_low = ci.low / std::fabs(m.baseline);
    m.ci_high = ci.high / std::fabs(m.baseline);
  }
}

// The row with its figures, change, interval and unadjusted p; its status and reason come
// from judge_run_level once every row's p is known.
MetricComparison run_level_row(const MetricRecord& base, const MetricRecord& cur, const std::string& stat,
                               double tolerance, const GateOptions& options) {
  auto m = row_for(cur, stat, tolerance);
  m.basis = "runs";
  const auto a = figures(base, stat);
  const auto b = figures(cur, stat);
  m.baseline_points = a;
  m.current_points = b;
  m.n_baseline = a.size();
  m.n_current = b.size();
  test_figures(m, a, b, options.alpha);
  return m;
}

bool enough_runs(const MetricComparison& m, const GateOptions& options) {
  return m.n_baseline >= options.min_runs && m.n_current >= options.min_runs;
}

// Status and reason of a run-level row whose p_value is final (adjusted over `family` rows).
void judge_run_level(MetricComparison& m, std::size_t family, const GateOptions& options) {
  std::string numbers = signed_pct(m.change);
  if (m.ci_low && m.ci_high)
    numbers += fmt::format(" ({:g}% CI {}..{})", (1 - options.alpha) * 100, signed_pct(*m.ci_low),
                           signed_pct(*m.ci_high));
  if (m.p_value)
    numbers += fmt::format(", p={}{}", p_text(*m.p_value), family > 1 ? fmt::format(" (BH, {} rows)", family) : "");
  numbers += fmt::format(", {} vs {} runs, tolerance {:g}%", m.n_baseline, m.n_current, m.tolerance * 100.0);
  if (!enough_runs(m, options)) {
    m.status = GateStatus::kWarn;
    m.reason = fmt::format("too few runs: {} baseline, {} current, need {} on each side (--repeat): {}", m.n_baseline,
                           m.n_current, options.min_runs, numbers);
    return;
  }
  const double sign = common::worse_sign(m.better);
  const bool significant = m.p_value && *m.p_value < options.alpha;
  m.status = significant && sign * m.change > m.tolerance ? GateStatus::kFail : GateStatus::kPass;
  if (m.status == GateStatus::kFail) m.reason = "regression: " + numbers;
  else if (sign * m.change < 0 && significant) m.reason = "improvement: " + numbers;
  else if (!significant) m.reason = "no significant change: " + numbers;
  else m.reason = "within tolerance: " + numbers;
}

}  // namespace

void compare_run_level(const MetricRecord& base, const MetricRecord& cur, double tolerance, const GateOptions& options,
                       std::vector<MetricComparison>& out) {
  // Sampled records have per-run percentiles (stats); derived single numbers only values.
  const bool sampled = (cur.runs && !cur.runs->p50.empty()) || (!cur.runs && cur.stats);
  if (!sampled) {
    out.push_back(run_level_row(base, cur, "value", tolerance, options));
    return;
  }
  out.push_back(run_level_row(base, cur, "p50", tolerance, options));
  if (latency_like(cur)) out.push_back(run_level_row(base, cur, "p99", tolerance, options));
}

void judge_run_level_rows(std::vector<MetricComparison>& rows, const GateOptions& options) {
  // Benjamini-Hochberg over the rows that are tested: the k-th smallest of m p-values
  // (k from 1) becomes min over j >= k of min(1, m p_(j) / j). When nothing changed
  // (every row's null true) a row then fails by chance with probability at most alpha,
  // as with Holm; when a regression moves several rows at once (step time, compute time,
  // throughput...), each of them needs less evidence than Holm asks of the first.
  std::vector<MetricComparison*> tested;
  for (auto& m : rows)
    if (m.basis == "runs" && m.p_value && enough_runs(m, options)) tested.push_back(&m);
  std::stable_sort(tested.begin(), tested.end(),
                   [](const MetricComparison* a, const MetricComparison* b) { return *a->p_value < *b->p_value; });
  const double m = static_cast<double>(tested.size());
  double running = 1.0;
  for (std::size_t k = tested.size(); k-- > 0;) {
    running = std::min(running, std::min(1.0, m * *tested[k]->p_value / static_cast<double>(k + 1)));
    tested[k]->p_value = running;
  }
  for (auto& m : rows)
    if (m.basis == "runs") judge_run_level(m, tested.size(), options);
}

}  // namespace chaosbench::reports

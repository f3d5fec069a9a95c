#include "reports/gate/gate.h"

#include <algorithm>

#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "common/values/percentile.h"
#include "common/values/units.h"
#include "reports/gate/gate_rows.h"
#include "reports/gate/gate_runs.h"
#include "reports/gate/gate_selection.h"
#include "reports/stats/statistics.h"

namespace chaosbench::reports {
namespace {

using namespace gate_detail;

// A high percentile is tested on each side's values at or above this percentile (the
// upper decile): a slower tail barely moves the ranks of the whole sample.
constexpr double kTailFrom = 90.0;

Labels without_rank_and_phase(Labels labels) {
  labels.erase("rank");
  labels.erase("phase");
  return labels;
}

// The values behind a record: every series of the same name whose labels, rank aside,
// are the record's, phase aside, at times inside the record's phase (its windows pooled,
// as the aggregator pools repeats; "overall" is the whole run). nullopt when the run
// has no such series: the record is a derived single number.
std::optional<std::vector<double>> samples_of(const RunResult& run, const MetricRecord& record) {
  const Labels key = without_rank_and_phase(record.labels);
  const std::string phase = phase_of(record.labels);
  std::vector<std::pair<double, double>> windows;
  if (phase != "overall")
    for (const auto& p : run.phases)
      if (p.name == phase) windows.emplace_back(p.start_s, p.end_s);
  std::optional<std::vector<std::pair<double, double>>> timed;  // (t, v) of every rank
  for (const auto& s : run.series) {
    if (s.name != record.name || without_rank_and_phase(s.labels) != key) continue;
    if (!timed) timed.emplace();
    for (std::size_t i = 0; i < s.v.size() && i < s.t.size(); ++i) {
      // A sample results.json holds as null (NaN) has no rank: the tests and percentiles
      // below need finite values (a NaN among them broke the sort and hung the tie loop).
      if (!std::isfinite(s.t[i]) || !std::isfinite(s.v[i])) continue;
      bool inside = phase == "overall";
      for (const auto& [start, end] : windows) inside = inside || (s.t[i] >= start && s.t[i] < end);
      if (inside) timed->emplace_back(s.t[i], s.v[i]);
    }
  }
  if (!timed) return std::nullopt;
  // In time order over all ranks: the noise estimate batches consecutive stretches.
  std::stable_sort(timed->begin(), timed->end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<double> out;
  out.reserve(timed->size());
  for (const auto& [t, v] : *timed) out.push_back(v);
  return out;
}

// FNV-1a of the row's identity, so each row's bootstrap stream does not depend on the
// order of the records.
std::uint64_t row_seed(std::uint64_t seed, const MetricRecord& r, const std::string& stat) {
  std::uint64_t h = 0xcbf29ce484222325ULL ^ seed;
  auto mix = [&](const std::string& s) {
    for (char ch : s) h = (h ^ static_cast<unsigned char>(ch)) * 0x100000001b3ULL;
    h = (h ^ 0xff) * 0x100000001b3ULL;
  };
  mix(r.name);
  for (const auto& [k, v] : r.labels) {
    mix(k);
    mix(label_to_string(v));
  }
  mix(stat);
  return h;
}

MetricComparison compare_single(const MetricRecord& base, const MetricRecord& cur, double tolerance) {
  auto m = row_for(cur, "value", tolerance);
  m.n_baseline = m.n_current = 1;
  m.baseline = base.value;
  m.current = cur.value;
  m.baseline_points = {base.value};
  m.current_points = {cur.value};
  m.change = relative_change(base.value, cur.value);
  const bool regressed = common::worse_sign(cur.better) * m.change > tolerance;
  m.status = regressed ? GateStatus::kWarn : GateStatus::kPass;
  m.reason = fmt::format("single value, no test: {}, tolerance {:g}%{}", signed_pct(m.change), tolerance * 100.0,
                         regressed ? " (a regression beyond the tolerance)" : "");
  return m;
}

MetricComparison compare_sampled(const MetricRecord& cur, std::vector<double> base_values,
                                 std::vector<double> cur_values, double percentile_p, const std::string& stat,
                                 double tolerance, const GateOptions& options) {
  auto m = row_for(cur, stat, tolerance);
  m.n_baseline = base_values.size();
  m.n_current = cur_values.size();
  m.baseline = common::percentile(base_values, percentile_p);
  m.current = common::percentile(cur_values, percentile_p);
  m.change = relative_change(m.baseline, m.current);

  const bool tail = percentile_p > 50;
  std::vector<double> test_base = tail ? upper_tail(base_values, kTailFrom) : base_values;
  std::vector<double> test_cur = tail ? upper_tail(cur_values, kTailFrom) : cur_values;
  const std::string tested = tail ? fmt::format(", upper decile {} vs {}", test_base.size(), test_cur.size()) : "";
  m.baseline_points = plot_quantiles(test_base);
  m.current_points = plot_quantiles(test_cur);

  if (!base_values.empty() && !cur_values.empty()) {
    m.p_value = mann_whitney_u(test_base, test_cur).p_value;
    BootstrapOptions bo;
    bo.confidence = 1.0 - options.alpha;
    bo.resamples = options.bootstrap_resamples;
    bo.seed = row_seed(options.seed, cur, stat);
    if (auto ci = bootstrap_change_ci(base_values, cur_values, percentile_p, bo)) {
      m.ci_low = ci->low;
      m.ci_high = ci->high;
    }
  }
  std::string numbers =
      m.ci_low ? fmt::format("{} ({:g}% CI {}..{}), p={}, tolerance {:g}%{}", signed_pct(m.change),
                             (1 - options.alpha) * 100, signed_pct(*m.ci_low), signed_pct(*m.ci_high),
                             p_text(*m.p_value), tolerance * 100.0, tested)
               : fmt::format("{}, tolerance {:g}%", signed_pct(m.change), tolerance * 100.0);

  if (test_base.size() < options.min_samples || test_cur.size() < options.min_samples) {
    m.status = GateStatus::kWarn;
    m.reason = fmt::format("too few samples: {} baseline, {} current{}, need {}{}: {}", test_base.size(),
                           test_cur.size(), tail ? " in the upper decile" : "", options.min_samples,
                           tail ? " there" : "", numbers);
    return m;
  }
  const double sign = common::worse_sign(cur.better);
  const bool significant = m.p_value && *m.p_value < options.alpha;
  // The whole interval beyond the tolerance on the worse side, widened by how much the
  // statistic wanders within each run on this machine: one run per side cannot tell a
  // shift that small from the machine's own drift.
  const double noise = std::max(within_run_noise(base_values, percentile_p > 50 ? kTailFrom : 50),
                                within_run_noise(cur_values, percentile_p > 50 ? kTailFrom : 50));
  const double band = tolerance + noise;
  const bool beyond = m.ci_low && (sign > 0 ? *m.ci_low > band : *m.ci_high < -band);
  if (noise > 0) numbers += fmt::format(", within-run noise {:.1f}%", noise * 100);
  if (significant && beyond) {
    m.status = GateStatus::kFail;
    m.reason = "regression: " + numbers;
  } else {
    m.status = GateStatus::kPass;
    if (sign * m.change < 0 && significant) m.reason = "improvement: " + numbers;
    else if (!significant) m.reason = "no significant change: " + numbers;
    else if (sign * m.change <= tolerance) m.reason = "within tolerance: " + numbers;
    else m.reason = "not clearly beyond tolerance and noise: " + numbers;
  }
  return m;
}

}  // namespace

Comparison compare_runs(const RunResult& baseline, const RunResult& current, const GateOptions& options) {
  Comparison out;
  out.baseline_run = baseline.run_id;
  out.baseline_started_at = baseline.started_at;
  out.alpha = options.alpha;
  const auto& rules = current.scenario_facts.tolerances;

  for (const auto& cur : current.metrics) {
    if (!gated(cur)) continue;
    const MetricRecord* base = nullptr;
    for (const auto& b : baseline.metrics) {
      if (b.name == cur.name && b.labels == cur.labels) {
        base = &b;
        break;
      }
    }
    if (!base) continue;
    const double tol = tolerance_for(cur, rules, options.default_tolerance);
    if (base->runs || cur.runs) {  // repeated runs on either side: one figure per run
      compare_run_level(*base, cur, tol, options, out.metrics);
      continue;
    }
    auto base_values = samples_of(baseline, *base);
    auto cur_values = samples_of(current, cur);
    if (!base_values && !cur_values) {
      out.metrics.push_back(compare_single(*base, cur, tol));
      continue;
    }
    if (!base_values) base_values.emplace();
    if (!cur_values) cur_values.emplace();
    out.metrics.push_back(compare_sampled(cur, *base_values, *cur_values, 50, "p50", tol, options));
    if (latency_like(cur))
      out.metrics.push_back(compare_sampled(cur, *base_values, *cur_values, 99, "p99", tol, options));
  }

  judge_run_level_rows(out.metrics, options);
  out.verdict = GateStatus::kPass;
  for (const auto& m : out.metrics) out.verdict = std::max(out.verdict, m.status);
  return out;
}

}  // namespace chaosbench::reports

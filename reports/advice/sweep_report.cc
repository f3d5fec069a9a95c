#include "reports/advice/sweep_report.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/metrics/metric_catalogue.h"
#include "reports/gate/gate.h"
#include "reports/model/text_format.h"

namespace chaosbench::reports {
namespace {

using common::MetricDisplay;
using common::MetricSpec;

// What the table shows per point, when any point has it: the catalogue's sweep columns.
std::vector<const MetricSpec*> columns() { return common::metrics_ranked_by(&MetricDisplay::sweep_column); }

// "step time p50 (ms)" for train/step_time's p50: the name's last part in words, the
// stat unless it is the value, and the unit unless the metric is a plain ratio.
std::string column_title(const MetricSpec& m) {
  std::string title(m.name.substr(m.name.rfind('/') + 1));
  std::replace(title.begin(), title.end(), '_', ' ');
  if (m.display.sweep_stat != "value") title += fmt::format(" {}", m.display.sweep_stat);
  if (!m.unit.empty() && m.unit != "ratio") title += fmt::format(" ({})", m.unit);
  return title;
}

// The key sweep.json's values carry a column under: "name" or "name:stat".
std::string column_key(const MetricSpec& m) {
  return m.display.sweep_stat == "value" ? std::string(m.name) : fmt::format("{}:{}", m.name, m.display.sweep_stat);
}

// The overall value of a metric (the mean over matching records, e.g. per collective).
std::optional<double> overall(const RunResult& run, const std::string& metric, std::string_view stat = "value") {
  double sum = 0;
  int n = 0;
  for (const auto& m : run.metrics) {
    if (m.name != metric || label_value(m.labels, "phase") != "overall") continue;
    double v = m.value;
    if (stat != "value") {
      if (!m.stats) continue;
      v = stat == "p50" ? m.stats->p50 : stat == "p99" ? m.stats->p99 : m.stats->mean;
    }
    if (!std::isfinite(v)) continue;
    sum += v;
    ++n;
  }
  if (n == 0) return std::nullopt;
  return sum / n;
}

std::string cell(std::optional<double> v) { return v ? fmt::format("{:.4g}", *v) : std::string("-"); }

// "step_time p50 -5.8% (99% CI -7.9..-3.6%, p=2e-06)" from the gate's row for `proxy`.
std::string confidence(const RunResult& runner_up, const RunResult& best, const std::string& proxy) {
  const Comparison c = compare_runs(runner_up, best);
  std::vector<const MetricComparison*> rows;
  for (const auto& m : c.metrics)
    if (m.name == proxy && m.stat == "p50" && label_value(m.labels, "phase") == "overall") rows.push_back(&m);
  if (rows.empty()) return "no per-step samples to test the margin";
  // Several rows (per message size): the one with the most samples speaks for them.
  const auto* r = *std::max_element(rows.begin(), rows.end(),
                                    [](auto a, auto b) { return a->n_current + a->n_baseline < b->n_current + b->n_baseline; });
  std::string text = fmt::format("{} p50 {:+.1f}%", proxy, r->change * 100);
  if (r->ci_low && r->ci_high)
    text += fmt::format(" ({:.0f}% CI {:+.1f}..{:+.1f}%", (1 - c.alpha) * 100, *r->ci_low * 100, *r->ci_high * 100);
  else
    text += " (";
  if (r->p_value) text += fmt::format(", p={:.2g}", *r->p_value);
  text += ")";
  const bool significant = r->p_value && *r->p_value < c.alpha && r->ci_low && r->ci_high &&
                           ((*r->ci_low > 0) == (*r->ci_high > 0));
  text += significant ? ": significant" : ": within the noise, the two are equivalent here";
  return text;
}

}  // namespace

SweepSummary summarize_sweep(std::string scenario, std::vector<SweepPointResult> points) {
  SweepSummary s;
  s.scenario = std::move(scenario);
  s.points = std::move(points);
  // The catalogue's sweep objectives, in order: with a target loss, the time to reach it is
  // what a tuning sweep (batch size, learning rate) is after, since a larger batch raises
  // throughput and may still take longer to converge.
  const auto objectives = common::metrics_ranked_by(&MetricDisplay::sweep_objective);
  const MetricSpec* objective = nullptr;
  for (const auto* o : objectives) {
    for (const auto& p : s.points)
      if (overall(p.result, std::string(o->name))) objective = o;
    if (objective) break;
  }
  if (!objective) {
    std::string names;
    for (const auto* o : objectives) names += fmt::format("{}{}", names.empty() ? "" : ", ", o->name);
    s.recommendation = fmt::format("no objective metric ({}) in these runs: compare the table.", names);
    return s;
  }
  s.objective = objective->name;
  s.better = objective->better;
  std::vector<std::size_t> passing;
  for (std::size_t i = 0; i < s.points.size(); ++i)
    if (s.points[i].result.verdict == Verdict::kPass && overall(s.points[i].result, s.objective)) passing.push_back(i);
  if (passing.empty()) {
    s.recommendation = "no point passed its checks: none is recommended.";
    return s;
  }
  const bool higher = s.better == common::Better::kHigher;
  std::sort(passing.begin(), passing.end(), [&](std::size_t a, std::size_t b) {
    const double va = *overall(s.points[a].result, s.objective), vb = *overall(s.points[b].result, s.objective);
    return higher ? va > vb : va < vb;
  });
  s.best = passing.front();
  const auto& best = s.points[*s.best];
  const double bv = *overall(best.result, s.objective);
  s.recommendation = fmt::format("best passing point: {} with {} {:.4g}", best.label, s.objective, bv);
  if (passing.size() > 1) {
    const auto& second = s.points[passing[1]];
    const double sv = *overall(second.result, s.objective);
    s.recommendation += fmt::format(", {:.1f}% {} than the runner-up {} ({:.4g}); {}", std::abs(bv / sv - 1) * 100,
                                    higher ? "higher" : "lower", second.label, sv,
                                    confidence(second.result, best.result, std::string(objective->display.sweep_proxy)));
  }
  s.recommendation += ".";
  return s;
}

std::string render_sweep_markdown(const SweepSummary& s) {
  std::vector<const MetricSpec*> shown;
  for (const auto* c : columns())
    for (const auto& p : s.points)
      if (overall(p.result, std::string(c->name), c->display.sweep_stat)) {
        shown.push_back(c);
        break;
      }
  std::string out = fmt::format("# Sweep: {} ({} points)\n\n", s.scenario, s.points.size());
  out += "| point | verdict |";
  for (const auto* c : shown) out += fmt::format(" {} |", column_title(*c));
  out += "\n|---|---|";
  for (std::size_t i = 0; i < shown.size(); ++i) out += "---|";
  out += "\n";
  for (std::size_t i = 0; i < s.points.size(); ++i) {
    const auto& p = s.points[i];
    out += fmt::format("| {}{} | {} |", p.label, s.best && *s.best == i ? " **(best)**" : "", to_string(p.result.verdict));
    for (const auto* c : shown) out += fmt::format(" {} |", cell(overall(p.result, std::string(c->name), c->display.sweep_stat)));
    out += "\n";
  }
  out += fmt::format("\n{}\n", s.recommendation);
  return out;
}

std::string render_sweep_console(const SweepSummary& s) {
  std::string out = fmt::format("\nsweep {}: {} points\n", s.scenario, s.points.size());
  for (std::size_t i = 0; i < s.points.size(); ++i) {
    const auto& p = s.points[i];
    std::string value = s.objective.empty() ? "" : fmt::format("{} {}", s.objective, cell(overall(p.result, s.objective)));
    out += fmt::format("  {} {:<40} {:<6} {}\n", s.best && *s.best == i ? "*" : " ", p.label, to_string(p.result.verdict), value);
  }
  out += fmt::format("\n  {}\n", s.recommendation);
  return out;
}

std::string sweep_to_json(const SweepSummary& s) {
  nlohmann::json j;
  j["scenario"] = s.scenario;
  j["objective"] = s.objective;
  j["better"] = common::to_string(s.better);
  j["best"] = s.best ? nlohmann::json(*s.best) : nlohmann::json(nullptr);
  j["recommendation"] = s.recommendation;
  auto& points = j["points"] = nlohmann::json::array();
  for (const auto& p : s.points) {
    nlohmann::json values = nlohmann::json::object();
    for (const auto* c : columns())
      if (auto v = overall(p.result, std::string(c->name), c->display.sweep_stat)) values[column_key(*c)] = *v;
    points.push_back({{"label", p.label}, {"overrides", p.overrides}, {"run_dir", p.run_dir},
                      {"verdict", to_string(p.result.verdict)}, {"reason", p.result.reason}, {"values", values}});
  }
  return j.dump(2) + "\n";
}

}  // namespace chaosbench::reports

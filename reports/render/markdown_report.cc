#include "reports/render/markdown_report.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <string_view>
#include <tuple>

#include "common/metrics/metric_catalogue.h"
#include "reports/model/text_format.h"
#include "reports/advice/tuning_advice.h"

namespace chaosbench::reports {
namespace {

// GitHub takes up to 1 MiB per step summary; stay below with room for a closing note.
constexpr std::size_t kMaxBytes = 1000 * 1000;
constexpr std::size_t kMaxCheckRows = 50;
constexpr std::size_t kMaxMetricRows = 150;
constexpr std::size_t kMaxGateRows = 50;
constexpr std::size_t kMaxFaultRows = 30;
constexpr std::size_t kMaxProbeRows = 30;
constexpr std::size_t kMaxAdvice = 5;
constexpr std::size_t kMaxAnnotations = 10;

std::string truncated_note(std::size_t shown, std::size_t total, std::string_view what) {
  return fmt::format("\n_{} of {} {} shown; the rest are in results.json._\n", shown, total, what);
}

std::string check_condition(const CheckResult& c) { return fmt::format("{} {:g}", c.op, c.threshold); }

std::string failed_checks(const RunResult& run) {
  std::vector<const CheckResult*> failed;
  for (const auto& c : run.checks)
    if (c.status != CheckStatus::kPass) failed.push_back(&c);
  if (failed.empty()) return run.checks.empty() ? "" : fmt::format("\nAll {} checks passed.\n", run.checks.size());
  std::string out = fmt::format("\n## Failed checks ({} of {})\n\n| metric | labels | condition | value | message |\n|---|---|---|---|---|\n",
                                failed.size(), run.checks.size());
  for (std::size_t i = 0; i < failed.size() && i < kMaxCheckRows; ++i) {
    const auto& c = *failed[i];
    out += fmt::format("| {} | {} | {} | {} | {} |\n", markdown_cell(c.metric), markdown_cell(format_labels(c.labels)),
                       markdown_cell(check_condition(c)), c.value ? fmt::format("{:g}", *c.value) : "no record",
                       markdown_cell(c.message));
  }
  if (failed.size() > kMaxCheckRows) out += truncated_note(kMaxCheckRows, failed.size(), "failed checks");
  return out;
}

// "+3.2% [+1.0%, +5.1%]"
std::string change_with_ci(const MetricComparison& c) {
  std::string ci = c.ci_low && c.ci_high ? fmt::format(" [{}, {}]", format_change(*c.ci_low), format_change(*c.ci_high)) : "";
  return format_change(c.change) + ci;
}

std::string key_metrics(const RunResult& run) {
  // Columns: the run's phases in order, then overall.
  std::vector<std::string> phases;
  for (const auto& p : run.phases)
    if (std::find(phases.begin(), phases.end(), p.name) == phases.end()) phases.push_back(p.name);
  // Rows: (the catalogue's key rank, name, labels less phase) -> phase -> record; the
  // key metrics are those the catalogue ranks, the rest are in results.json.
  std::map<std::tuple<int, std::string, Labels>, std::map<std::string, const MetricRecord*>> rows;
  bool any_overall = false;
  for (const auto& m : run.metrics) {
    const auto* spec = common::find_metric(m.name);
    if (!spec || spec->display.key_rank == 0) continue;
    std::string phase = label_value(m.labels, "phase");
    any_overall |= phase == "overall";
    if (phase != "overall" && std::find(phases.begin(), phases.end(), phase) == phases.end()) phases.push_back(phase);
    rows[{spec->display.key_rank, m.name, without_phase(m.labels)}][phase] = &m;
  }
  if (rows.empty()) return "";
  if (any_overall) phases.push_back("overall");
  std::map<std::pair<std::string, Labels>, std::vector<const MetricComparison*>> deltas;
  if (run.comparison)
    for (const auto& c : run.comparison->metrics) deltas[{c.name, without_phase(c.labels)}].push_back(&c);

  std::string out = "\n## Key metrics\n\n| metric | labels |";
  std::string rule = "|---|---|";
  for (const auto& p : phases) out += fmt::format(" {} |", markdown_cell(p)), rule += "---:|";
  if (run.comparison) out += " Δ vs baseline run |", rule += "---|";
  out += fmt::format("\n{}\n", rule);
  std::size_t shown = 0;
  for (const auto& [key, by_phase] : rows) {
    if (++shown > kMaxMetricRows) break;
    const auto& [rank, name, labels] = key;
    out += fmt::format("| {} | {} |", name, markdown_cell(format_labels(labels)));
    for (const auto& p : phases) {
      auto it = by_phase.find(p);
      out += fmt::format(" {} |", it == by_phase.end() ? std::string("–") : markdown_cell(format_value(it->second->value, it->second->unit)));
    }
    if (run.comparison) {
      // The overall comparison when there is one, else the first phase compared.
      const MetricComparison* shown_delta = nullptr;
      auto it = deltas.find({name, labels});
      if (it != deltas.end())
        for (const auto* c : it->second)
          if (!shown_delta || label_value(c->labels, "phase") == "overall") shown_delta = c;
      out += fmt::format(" {} |", shown_delta ? markdown_cell(fmt::format("{} {} ({} {})", change_with_ci(*shown_delta),
                                                                         verdict_text(shown_delta->status),
                                                                         label_value(shown_delta->labels, "phase"), shown_delta->stat))
                                             : std::string("–"));
    }
    out += "\n";
  }
  if (rows.size() > kMaxMetricRows) out += truncated_note(kMaxMetricRows, rows.size(), "metric rows");
  return out;
}

std::string gate(const RunResult& run) {
  if (!run.comparison) return "";
  const auto& cmp = *run.comparison;
  std::vector<const MetricComparison*> flagged;
  for (const auto& c : cmp.metrics)
    if (c.status != GateStatus::kPass) flagged.push_back(&c);
  std::string out = fmt::format("\n## Baseline gate: {}\n\nAgainst run `{}`{}: {} metrics compared, {} not passing (alpha {:g}).\n",
                                verdict_text(cmp.verdict), markdown_cell(cmp.baseline_run),
                                cmp.baseline_started_at.empty() ? "" : fmt::format(" of {}", markdown_cell(cmp.baseline_started_at)),
                                cmp.metrics.size(), flagged.size(), cmp.alpha);
  if (flagged.empty()) return out;
  out += "\n| metric | labels | stat | baseline | current | change [CI] | p | status | reason |\n|---|---|---|---:|---:|---|---:|---|---|\n";
  for (std::size_t i = 0; i < flagged.size() && i < kMaxGateRows; ++i) {
    const auto& c = *flagged[i];
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", markdown_cell(c.name), markdown_cell(format_labels(c.labels)),
                       c.stat, markdown_cell(format_value(c.baseline, c.unit)), markdown_cell(format_value(c.current, c.unit)),
                       markdown_cell(change_with_ci(c)), c.p_value ? fmt::format("{:.2g}", *c.p_value) : "–",
                       verdict_text(c.status), markdown_cell(c.reason));
  }
  if (flagged.size() > kMaxGateRows) out += truncated_note(kMaxGateRows, flagged.size(), "gated metrics");
  return out;
}

std::string faults(const RunResult& run) {
  if (run.faults.empty()) return "";
  std::string out = "\n## Faults\n\n| fault | type | targets | window | backend |\n|---|---|---|---|---|\n";
  for (std::size_t i = 0; i < run.faults.size() && i < kMaxFaultRows; ++i) {
    const auto& f = run.faults[i];
    std::string targets;
    for (const auto& t : f.targets) targets += (targets.empty() ? "" : ", ") + t;
    std::string window = !f.applied_at_s ? "not applied"
                         : f.reverted_at_s ? fmt::format("{:.2f} s → {:.2f} s", *f.applied_at_s, *f.reverted_at_s)
                                           : fmt::format("{:.2f} s → end{}", *f.applied_at_s, f.reversible ? "" : " (irreversible)");
    std::string name = f.occurrence > 1 ? fmt::format("{} #{}", f.name, f.occurrence) : f.name;
    out += fmt::format("| {} | {} | {} | {} | {}{} |\n", markdown_cell(name), markdown_cell(f.type), markdown_cell(targets), window,
                       markdown_cell(f.backend.empty() ? "–" : f.backend), f.error.empty() ? "" : fmt::format(" — error: {}", markdown_cell(f.error)));
  }
  if (run.faults.size() > kMaxFaultRows) out += truncated_note(kMaxFaultRows, run.faults.size(), "faults");
  return out;
}

// One row per probe: what it watched and how often it failed, with its last failure's
// evidence (the transitions themselves are in results.json and on the report's timeline).
std::string probes(const RunResult& run) {
  if (run.probes.empty()) return "";
  std::string out = "\n## Probes\n\n| probe | kind | mode | evaluations | failures | last failure |\n|---|---|---|---:|---:|---|\n";
  for (std::size_t i = 0; i < run.probes.size() && i < kMaxProbeRows; ++i) {
    const auto& p = run.probes[i];
    std::string last = "–";
    for (auto t = p.transitions.rbegin(); t != p.transitions.rend(); ++t)
      if (!t->ok) {
        last = fmt::format("{:.2f} s: {}", t->t, markdown_cell(t->evidence));
        break;
      }
    out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", markdown_cell(p.name), markdown_cell(p.kind), markdown_cell(p.mode),
                       p.evaluations, p.failures, last);
  }
  if (run.probes.size() > kMaxProbeRows) out += truncated_note(kMaxProbeRows, run.probes.size(), "probes");
  return out;
}

std::string advice(const RunResult& run) {
  auto all = tuning_advice(run);
  if (all.empty()) return "";
  std::string out = "\n## Tuning advice\n\n";
  for (std::size_t i = 0; i < all.size() && i < kMaxAdvice; ++i)
    out += fmt::format("- **{}** ({}, `{}`): {}. {}\n", markdown_cell(all[i].title), all[i].severity, all[i].rule,
                       markdown_cell(all[i].evidence), markdown_cell(all[i].recommendation));
  if (all.size() > kMaxAdvice) out += fmt::format("\n_{} more in report.html._\n", all.size() - kMaxAdvice);
  return out;
}

}  // namespace

std::string render_markdown(const RunResult& run) {
  std::string name = run.scenario_name.empty() ? "unnamed scenario" : run.scenario_name;
  std::string out = fmt::format("# chaosbench: {} — {}\n\n**{}**", markdown_cell(name), verdict_text(run.verdict), verdict_text(run.verdict));
  if (!run.reason.empty()) out += fmt::format(": {}", markdown_cell(run.reason));
  if (run.abort) out += fmt::format("\n\nAborted: {}", markdown_cell(abort_text(*run.abort)));
  if (run.repeat) out += fmt::format("\n\nCombined: {}.", markdown_cell(repeat_text(*run.repeat)));
  out += fmt::format("\n\nRun `{}`{}, {:.1f} s, seed {}{}.\n", markdown_cell(run.run_id.empty() ? "-" : run.run_id),
                     run.started_at.empty() ? "" : fmt::format(" started {}", markdown_cell(run.started_at)), run.duration_s, run.seed,
                     run.environment.host.empty() ? "" : fmt::format(" on {}", markdown_cell(run.environment.host)));
  for (const auto& section : {failed_checks(run), gate(run), key_metrics(run), faults(run), probes(run), advice(run)}) {
    if (out.size() + section.size() > kMaxBytes) {
      out += "\n_The summary was cut here to stay under GitHub's 1 MiB limit; see results.json._\n";
      break;
    }
    out += section;
  }
  return out;
}

std::vector<std::string> github_annotations(const RunResult& run, const std::string& scenario_file) {
  std::vector<std::string> out;
  std::size_t failed = 0;
  for (const auto& c : run.checks) {
    if (c.status == CheckStatus::kPass) continue;
    if (++failed > kMaxAnnotations) continue;
    std::string message = fmt::format("{}{}{} {}: {}", c.metric, c.labels.empty() ? "" : " ", format_labels(c.labels),
                                      check_condition(c), c.message.empty() ? (c.value ? fmt::format("{:g}", *c.value) : "no record") : c.message);
    out.push_back(fmt::format("::error file={},title={}::{}", github_escape_property(scenario_file),
                              github_escape_property("chaosbench check"), github_escape_data(message)));
  }
  if (failed > kMaxAnnotations) out.push_back(fmt::format("::warning::{} more failed checks", failed - kMaxAnnotations));
  return out;
}

}  // namespace chaosbench::reports

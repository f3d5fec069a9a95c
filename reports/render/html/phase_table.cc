#include "reports/render/html/phase_table.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>

#include "reports/render/html/fault_table.h"
#include "reports/render/html/html_text.h"

namespace chaosbench::reports::html {
namespace {

struct Row {
  std::string unit;
  std::map<std::string, const MetricRecord*> by_phase;
  std::map<std::string, std::vector<const MetricComparison*>> compared;  // by phase, with --baseline
};

// "+35%" against the baseline phase, coloured by the metric's better-direction (within
// 2% is flat).
std::string phase_delta(const MetricRecord& m, const MetricRecord* base) {
  if (!base || !(std::fabs(base->value) > 0) || !std::isfinite(m.value)) return "";
  double change = (m.value - base->value) / std::fabs(base->value);
  std::string cls = "flat";
  if (std::fabs(change) > 0.02 && m.better != common::Better::kNone)
    cls = (change < 0) == (m.better == common::Better::kLower) ? "good" : "bad";
  return fmt::format("<span class=\"delta {}\">{:+.0f}%</span>", cls, change * 100);
}

std::string stats_title(const MetricRecord& m) {
  if (!m.stats) return "";
  const Stats& s = *m.stats;
  return fmt::format(" title=\"{}\"", escape(fmt::format("n={} min={} p50={} p90={} p99={} max={}", s.n,
                                                           format_unit(s.min, m.unit), format_unit(s.p50, m.unit),
                                                           format_unit(s.p90, m.unit), format_unit(s.p99, m.unit),
                                                           format_unit(s.max, m.unit))));
}

// Labels every row of a metric has with the same value ("ranks=4"): said once, in the
// metric's header row.
Labels common_labels(const std::map<Labels, Row>& by_labels) {
  Labels shared = by_labels.begin()->first;
  for (const auto& [labels, row] : by_labels)
    std::erase_if(shared, [&](const auto& kv) {
      auto it = labels.find(kv.first);
      return it == labels.end() || it->second != kv.second;
    });
  return shared;
}

// Families in the order people read them; first-seen order within a family.
int family_rank(const std::string& name) {
  constexpr const char* kFamilies[] = {"train/", "infer/", "comm/", "resilience/", "ckpt/", "compute/", "fault/"};
  for (std::size_t i = 0; i < std::size(kFamilies); ++i)
    if (name.starts_with(kFamilies[i])) return static_cast<int>(i);
  return static_cast<int>(std::size(kFamilies));
}

// Every record under `prefix` (and, for the full table, every baseline comparison) by
// metric name and label set, names in first-seen order, then by family.
struct Table {
  std::vector<std::string> names;
  std::map<std::string, std::map<Labels, Row>> rows;
};

Table collect_rows(const RunResult& run, std::string_view prefix, bool compared) {
  Table t;
  auto row_for = [&](const std::string& name, Labels labels, const std::string& unit) -> Row& {
    labels.erase("phase");
    if (!t.rows.contains(name)) t.names.push_back(name);
    Row& row = t.rows[name][labels];
    if (row.unit.empty()) row.unit = unit;
    return row;
  };
  for (const auto& m : run.metrics)
    if (m.name.starts_with(prefix) && !per_fault_record(m.name, m.labels))
      row_for(m.name, m.labels, m.unit).by_phase[label(m.labels, "phase")] = &m;
  if (compared)
    for (const auto& c : run.comparison->metrics)
      if (!per_fault_record(c.name, c.labels))
        row_for(c.name, c.labels, c.unit).compared[label(c.labels, "phase")].push_back(&c);
  std::stable_sort(t.names.begin(), t.names.end(),
                   [](const std::string& a, const std::string& b) { return family_rank(a) < family_rank(b); });
  return t;
}

// A column: one phase, or a fault's window and the recovery after it, stacked in one cell
// ("during" over "after"), so that n faults take n columns, not 2n.
struct PhaseColumn {
  std::string head;           // escaped HTML
  std::string during, after;  // phases; `after` only in a fault's column, either may be ""
  bool fault = false;         // a fault's column
};

// The run's phases that some row has a value in, in the run's order, as columns.
std::vector<PhaseColumn> used_columns(const RunResult& run, const Table& t) {
  std::vector<std::string> phases;
  for (const auto& p : phase_columns(run)) {
    bool used = false;
    for (const auto& [name, by_labels] : t.rows)
      for (const auto& [labels, row] : by_labels) used = used || row.by_phase.contains(p) || row.compared.contains(p);
    if (used) phases.push_back(p);
  }
  auto used = [&](const std::string& p) { return std::find(phases.begin(), phases.end(), p) != phases.end(); };
  std::map<std::string, std::string> swatch;  // fault name -> its first occurrence's swatch
  const auto swatches = fault_swatches(run);
  for (std::size_t i = 0; i < run.faults.size(); ++i) swatch.emplace(run.faults[i].name, swatches[i]);
  std::vector<PhaseColumn> columns;
  std::vector<std::string> paired;
  for (const auto& p : phases) {
    const bool fault = p.starts_with("fault:"), recovery = p.starts_with("recovery:");
    if (!fault && !recovery) {
      columns.push_back({escape(p), p, "", false});
      continue;
    }
    const std::string name = p.substr(p.find(':') + 1);
    if (std::find(paired.begin(), paired.end(), name) != paired.end()) continue;
    paired.push_back(name);
    const std::string during = "fault:" + name, after = "recovery:" + name;
    columns.push_back({fmt::format("{}{}<span class=\"sub\">during<br><span class=\"after\">after</span></span>",
                                   swatch[name], escape(name)),
                       used(during) ? during : "", used(after) ? after : "", true});
  }
  return columns;
}

std::string table_head(const RunResult& run, std::string_view prefix, bool compared, const std::vector<PhaseColumn>& columns) {
  std::string out;
  if (compared) {
    const auto& c = *run.comparison;
    out += fmt::format(
        "<p>Against baseline run <code>{}</code>{}: {} &mdash; under each value, the relative change of the compared "
        "statistic against that run (hover it for its bootstrap confidence interval, alpha {}, and the reason); a "
        "regression fails only when significant and beyond its tolerance. The <a href=\"#gate\">baseline gate</a> "
        "section plots both sides of every row.</p>\n",
        escape(c.baseline_run), c.baseline_started_at.empty() ? "" : fmt::format(" of {}", escape(c.baseline_started_at)),
        badge(to_string(c.verdict)), c.alpha);
  }
  if (prefix.empty())
    out += "<p class=\"note\">Each phase's value with its change against the baseline phase (green better, red worse, "
           "by the metric's direction); a fault's column holds its window (during) over the recovery after it "
           "(after); hover a value for its statistics. Figures of one fault (time to detect and recover, lost steps, "
           "retention) are in the per-fault table below.</p>\n";
  out += "<div class=\"scroll\"><table class=\"data phases\">\n<thead><tr><th class=\"first\">metric</th>";
  for (const auto& c : columns) out += fmt::format("<th class=\"num phase{}\">{}</th>", c.fault ? " fault" : "", c.head);
  return out + "</tr></thead>\n<tbody>\n";
}

// One phase's value with its change against the baseline phase, and under it its
// comparisons with the baseline run; "" when it has neither.
std::string phase_value(const Row& row, const std::string& phase) {
  std::string out;
  if (auto it = row.by_phase.find(phase); it != row.by_phase.end()) {
    const MetricRecord& m = *it->second;
    auto base = row.by_phase.find("baseline");
    bool delta = phase != "baseline" && phase != "overall" && base != row.by_phase.end();
    std::string value = m.unit == "bytes" ? format_unit(m.value, m.unit) : format_unit(m.value, "");
    out = fmt::format("<span{}>{}</span>{}", stats_title(m), escape(value), delta ? phase_delta(m, base->second) : "");
  }
  if (auto it = row.compared.find(phase); it != row.compared.end())
    for (const auto* c : it->second) out += comparison_html(*c);
  return out;
}

// One row's cells: a value per phase; in a fault's column, during over after ("–" for a
// missing half of a pair, so that the halves stay on their lines).
std::string phase_cells(const Row& row, const std::vector<PhaseColumn>& columns) {
  std::string out;
  for (const auto& c : columns) {
    std::string during = phase_value(row, c.during);
    if (!c.fault) {
      out += fmt::format("<td class=\"num\">{}</td>", during);
      continue;
    }
    std::string after = phase_value(row, c.after);
    if (during.empty() && after.empty()) {
      out += "<td class=\"num\"></td>";
      continue;
    }
    out += fmt::format("<td class=\"num pair\"><div>{}</div><div class=\"after\">{}</div></td>",
                       during.empty() ? "&ndash;" : during, after.empty() ? "&ndash;" : after);
  }
  return out;
}

// "train/step_time" with a break allowed after the slash.
std::string metric_name_html(const std::string& name) {
  std::string out = escape(name);
  if (auto slash = out.find('/'); slash != std::string::npos) out.insert(slash + 1, "<wbr>");
  return out;
}

// One metric: one row per label set under a header row; a metric with a single row is that
// row. The unit follows the metric's name.
std::string metric_rows(const std::string& name, const std::map<Labels, Row>& by_labels,
                        const std::vector<PhaseColumn>& columns) {
  const std::size_t rest = columns.size();
  const bool grouped = by_labels.size() > 1;
  const Labels shared = common_labels(by_labels);
  const std::string unit = by_labels.begin()->second.unit;
  const std::string title = fmt::format("{}{}", metric_name_html(name),
                                        unit.empty() ? "" : fmt::format(" <span class=\"unit\">{}</span>", escape(unit)));
  std::string out;
  if (grouped)
    out += fmt::format("<tr class=\"group\"><td class=\"first\">{} <span class=\"lbl\">{}</span></td>"
                       "<td colspan=\"{}\"></td></tr>\n",
                       title, escape(labels_text(shared)), rest);
  for (const auto& [labels, row] : by_labels) {
    Labels own = labels;
    if (grouped)
      for (const auto& [k, v] : shared) own.erase(k);
    std::string text = own.empty() ? "all" : labels_text(own);
    std::string first = grouped          ? fmt::format("<span class=\"lbl\">{}</span>", escape(text))
                        : labels.empty() ? title
                                         : fmt::format("{} <span class=\"lbl\">{}</span>", title, escape(text));
    out += fmt::format("<tr><td class=\"first{}\">{}</td>", grouped ? " member" : "", first);
    out += phase_cells(row, columns);
    out += "</tr>\n";
  }
  return out;
}

}  // namespace

std::string phase_table_html(const RunResult& run, std::string_view prefix) {
  const bool compared = run.comparison.has_value() && prefix.empty();
  const Table t = collect_rows(run, prefix, compared);
  if (t.names.empty()) return "<p class=\"empty\">No metric records in this run.</p>";
  const std::vector<PhaseColumn> columns = used_columns(run, t);
  std::string out = table_head(run, prefix, compared, columns);
  for (const auto& name : t.names) out += metric_rows(name, t.rows.at(name), columns);
  out += "</tbody></table></div>\n";
  return out;
}

}  // namespace chaosbench::reports::html

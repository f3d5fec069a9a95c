#include "reports/html/phase_table.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>

#include "reports/html/fault_table.h"
#include "reports/html/html_text.h"

namespace chaosbench::reports::html {
namespace {

struct Row {
  std::string unit, better;
  std::map<std::string, const MetricRecord*> by_phase;
  std::vector<const MetricComparison*> comparisons;
};

// "+35%" against the baseline phase, coloured by the metric's better-direction (within
// 2% is flat).
std::string phase_delta(const MetricRecord& m, const MetricRecord* base) {
  if (!base || !(std::fabs(base->value) > 0) || !std::isfinite(m.value)) return "";
  double change = (m.value - base->value) / std::fabs(base->value);
  std::string cls = "flat";
  if (std::fabs(change) > 0.02 && m.better != "none")
    cls = (change < 0) == (m.better == "lower") ? "good" : "bad";
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

std::string pct(double x) { return fmt::format("{:+.1f}%", x * 100); }

std::string comparison_cell(const Row& row) {
  std::string out;
  for (const auto* c : row.comparisons) {
    std::string ci = c->ci_low && c->ci_high ? fmt::format(" [{}, {}]", pct(*c->ci_low), pct(*c->ci_high)) : "";
    std::string phase = label(c->labels, "phase");
    out += fmt::format("<div title=\"{}\">{}{} {}{} {}</div>", escape(c->reason),
                       phase == "overall" ? "" : fmt::format("<span class=\"lbl\">{}</span> ", escape(phase)), escape(c->stat),
                       pct(c->change), ci, badge(to_string(c->status)));
  }
  return out;
}

// Every record under `prefix` (and, for the full table, every baseline comparison) by
// metric name and label set, names in first-seen order, then by family.
struct Table {
  std::vector<std::string> names;
  std::map<std::string, std::map<Labels, Row>> rows;
};

Table collect_rows(const RunResult& run, std::string_view prefix, bool compared) {
  Table t;
  auto row_for = [&](const std::string& name, Labels labels, const std::string& unit, const std::string& better) -> Row& {
    labels.erase("phase");
    if (!t.rows.contains(name)) t.names.push_back(name);
    Row& row = t.rows[name][labels];
    if (row.unit.empty()) row.unit = unit;
    if (row.better.empty()) row.better = better;
    return row;
  };
  for (const auto& m : run.metrics)
    if (m.name.starts_with(prefix) && !per_fault_record(m.name, m.labels))
      row_for(m.name, m.labels, m.unit, m.better).by_phase[label(m.labels, "phase")] = &m;
  if (compared)
    for (const auto& c : run.comparison->metrics)
      if (!per_fault_record(c.name, c.labels)) row_for(c.name, c.labels, c.unit, c.better).comparisons.push_back(&c);
  std::stable_sort(t.names.begin(), t.names.end(),
                   [](const std::string& a, const std::string& b) { return family_rank(a) < family_rank(b); });
  return t;
}

// The run's phases that some row has a value in, in the run's order.
std::vector<std::string> used_phases(const RunResult& run, const Table& t) {
  std::vector<std::string> phases;
  for (const auto& p : phase_columns(run)) {
    bool used = false;
    for (const auto& [name, by_labels] : t.rows)
      for (const auto& [labels, row] : by_labels) used = used || row.by_phase.contains(p);
    if (used) phases.push_back(p);
  }
  return phases;
}

std::string table_head(const RunResult& run, std::string_view prefix, bool compared, const std::vector<std::string>& phases) {
  std::string out;
  if (compared) {
    const auto& c = *run.comparison;
    out += fmt::format(
        "<p>Against baseline run <code>{}</code>{}: {} &mdash; relative change of the statistic with its bootstrap "
        "confidence interval (alpha {}); a regression fails only when significant and beyond its tolerance.</p>\n",
        escape(c.baseline_run), c.baseline_started_at.empty() ? "" : fmt::format(" of {}", escape(c.baseline_started_at)),
        badge(to_string(c.verdict)), c.alpha);
  }
  if (prefix.empty())
    out += "<p class=\"note\">Each phase's value with its change against the baseline phase (green better, red worse, "
           "by the metric's direction); hover a value for its statistics.</p>\n";
  out += "<div class=\"scroll\"><table class=\"data phases\">\n<thead><tr><th>metric</th><th>unit</th>";
  for (const auto& p : phases) {
    std::string head = escape(p);
    if (auto colon = head.find(':'); colon != std::string::npos) head.insert(colon + 1, "<wbr>");
    out += fmt::format("<th class=\"num phase\">{}</th>", head);
  }
  if (compared) out += "<th>vs baseline run</th>";
  return out + "</tr></thead>\n<tbody>\n";
}

// One row's cells: its value in each phase, with the change against the baseline phase.
std::string phase_cells(const Row& row, const std::vector<std::string>& phases) {
  std::string out;
  auto base = row.by_phase.find("baseline");
  for (const auto& p : phases) {
    auto it = row.by_phase.find(p);
    if (it == row.by_phase.end()) {
      out += "<td class=\"num\"></td>";
      continue;
    }
    const MetricRecord& m = *it->second;
    bool delta = p != "baseline" && p != "overall" && base != row.by_phase.end();
    std::string value = m.unit == "bytes" ? format_unit(m.value, m.unit) : format_unit(m.value, "");
    out += fmt::format("<td class=\"num\"{}>{}{}</td>", stats_title(m), escape(value),
                       delta ? phase_delta(m, base->second) : "");
  }
  return out;
}

// One metric: one row per label set under a header row; a metric with a single row is that row.
std::string metric_rows(const std::string& name, const std::map<Labels, Row>& by_labels,
                        const std::vector<std::string>& phases, bool compared) {
  const std::size_t columns = phases.size() + 2 + (compared ? 1 : 0);
  const bool grouped = by_labels.size() > 1;
  const Labels shared = common_labels(by_labels);
  std::string out;
  if (grouped)
    out += fmt::format("<tr class=\"group\"><td colspan=\"{}\">{} <span class=\"lbl\">{}</span></td></tr>\n",
                       columns, escape(name), escape(labels_text(shared)));
  for (const auto& [labels, row] : by_labels) {
    Labels own = labels;
    if (grouped)
      for (const auto& [k, v] : shared) own.erase(k);
    std::string text = own.empty() ? "all" : labels_text(own);
    std::string first = grouped          ? fmt::format("<span class=\"lbl\">{}</span>", escape(text))
                        : labels.empty() ? escape(name)
                                         : fmt::format("{} <span class=\"lbl\">{}</span>", escape(name), escape(text));
    out += fmt::format("<tr><td class=\"first\">{}</td><td>{}</td>", first, escape(row.unit));
    out += phase_cells(row, phases);
    if (compared) out += fmt::format("<td class=\"cmp\">{}</td>", comparison_cell(row));
    out += "</tr>\n";
  }
  return out;
}

}  // namespace

std::string phase_table_html(const RunResult& run, std::string_view prefix) {
  const bool compared = run.comparison.has_value() && prefix.empty();
  const Table t = collect_rows(run, prefix, compared);
  if (t.names.empty()) return "<p class=\"empty\">No metric records in this run.</p>";
  const std::vector<std::string> phases = used_phases(run, t);
  std::string out = table_head(run, prefix, compared, phases);
  for (const auto& name : t.names) out += metric_rows(name, t.rows.at(name), phases, compared);
  out += "</tbody></table></div>\n";
  return out;
}

}  // namespace chaosbench::reports::html

#include "reports/html/phase_table.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>

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
                       pct(c->change), ci, badge(c->status));
  }
  return out;
}

}  // namespace

std::string phase_table_html(const RunResult& run, std::string_view prefix) {
  std::vector<std::string> names;  // first-seen order
  std::map<std::string, std::map<Labels, Row>> rows;
  auto row_for = [&](const std::string& name, Labels labels, const std::string& unit, const std::string& better) -> Row& {
    labels.erase("phase");
    if (!rows.contains(name)) names.push_back(name);
    Row& row = rows[name][labels];
    if (row.unit.empty()) row.unit = unit;
    if (row.better.empty()) row.better = better;
    return row;
  };
  for (const auto& m : run.metrics)
    if (m.name.starts_with(prefix)) row_for(m.name, m.labels, m.unit, m.better).by_phase[label(m.labels, "phase")] = &m;
  const bool compared = run.comparison.has_value() && prefix.empty();
  if (compared)
    for (const auto& c : run.comparison->metrics) row_for(c.name, c.labels, c.unit, c.better).comparisons.push_back(&c);
  if (names.empty()) return "<p class=\"empty\">No metric records in this run.</p>";
  std::stable_sort(names.begin(), names.end(),
                   [](const std::string& a, const std::string& b) { return family_rank(a) < family_rank(b); });

  std::vector<std::string> phases;
  for (const auto& p : phase_columns(run)) {
    for (const auto& [name, by_labels] : rows) {
      bool used = false;
      for (const auto& [labels, row] : by_labels) used = used || row.by_phase.contains(p);
      if (used) {
        phases.push_back(p);
        break;
      }
    }
  }

  std::string out;
  if (compared) {
    const auto& c = *run.comparison;
    out += fmt::format(
        "<p>Against baseline run <code>{}</code>{}: {} &mdash; relative change of the statistic with its bootstrap "
        "confidence interval (alpha {}); a regression fails only when significant and beyond its tolerance.</p>\n",
        escape(c.baseline_run), c.baseline_started_at.empty() ? "" : fmt::format(" of {}", escape(c.baseline_started_at)),
        badge(c.verdict), c.alpha);
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
  out += "</tr></thead>\n<tbody>\n";
  const std::size_t columns = phases.size() + 2 + (compared ? 1 : 0);
  for (const auto& name : names) {
    const auto& by_labels = rows[name];
    // One row per label set under a header row; a metric with a single row is that row.
    bool grouped = by_labels.size() > 1;
    Labels shared = common_labels(by_labels);
    if (grouped)
      out += fmt::format("<tr class=\"group\"><td colspan=\"{}\">{} <span class=\"lbl\">{}</span></td></tr>\n",
                         columns, escape(name), escape(labels_text(shared)));
    for (const auto& [labels, row] : by_labels) {
      Labels own = labels;
      if (by_labels.size() > 1)
        for (const auto& [k, v] : shared) own.erase(k);
      std::string text = own.empty() ? "all" : labels_text(own);
      std::string first = grouped          ? fmt::format("<span class=\"lbl\">{}</span>", escape(text))
                          : labels.empty() ? escape(name)
                                           : fmt::format("{} <span class=\"lbl\">{}</span>", escape(name), escape(text));
      out += fmt::format("<tr><td class=\"first\">{}</td><td>{}</td>", first, escape(row.unit));
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
      if (compared) out += fmt::format("<td class=\"cmp\">{}</td>", comparison_cell(row));
      out += "</tr>\n";
    }
  }
  out += "</tbody></table></div>\n";
  return out;
}

}  // namespace chaosbench::reports::html

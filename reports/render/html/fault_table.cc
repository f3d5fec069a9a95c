#include "reports/render/html/fault_table.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <tuple>
#include <vector>

#include "reports/render/html/html_text.h"

namespace chaosbench::reports::html {
namespace {

constexpr std::string_view kRetention = "resilience/throughput_retention";

// The columns every run with resilience metrics shows, in this order, with their titles.
struct Fixed {
  std::string_view metric, title;
};
constexpr Fixed kFixed[] = {{"resilience/time_to_detect", "time to detect"},
                            {"resilience/time_to_recover", "time to recover"},
                            {"resilience/lost_steps", "lost steps"},
                            {kRetention, "throughput retention"}};

using CellKey = std::tuple<std::string, std::string, std::string>;  // fault, occurrence, column

struct Column {
  std::string key, title, metric;
};

// The cell of a per-fault record (or comparison): its fault, occurrence ("" for all of
// them) and column, one per metric name and the labels other than the fault's own.
CellKey cell_key(const std::string& name, const Labels& labels) {
  Labels rest = labels;
  for (const char* own : {"phase", "fault", "occurrence"}) rest.erase(own);
  std::string column = rest.empty() ? name : fmt::format("{} {{{}}}", name, labels_text(rest));
  if (name == kRetention)
    return {label(labels, "phase").substr(std::string_view("fault:").size()), "", std::move(column)};
  return {label(labels, "fault"), label(labels, "occurrence"), std::move(column)};
}

// "fault/apply_latency {x=1}" -> "apply latency {x=1}".
std::string column_title(const std::string& key) {
  std::string title = key.substr(key.find('/') + 1);
  for (auto& c : title)
    if (c == '_') c = ' ';
  return title;
}

struct Cells {
  std::vector<Column> columns;
  std::map<CellKey, const MetricRecord*> at;
  std::map<CellKey, std::vector<const MetricComparison*>> compared;  // with --baseline
  std::vector<std::pair<std::string, std::string>> orphans;  // records of faults run.faults lacks
};

bool has_fault(const RunResult& run, const std::string& name, const std::string& occurrence) {
  for (const auto& f : run.faults)
    if (f.name == name && (occurrence.empty() || std::to_string(f.occurrence) == occurrence)) return true;
  return false;
}

Cells collect(const RunResult& run) {
  Cells c;
  bool resilience = false;
  for (const auto& m : run.metrics) resilience = resilience || m.name.starts_with("resilience/");
  if (resilience)
    for (const auto& f : kFixed) c.columns.push_back({std::string(f.metric), std::string(f.title), std::string(f.metric)});
  for (const auto& m : run.metrics) {
    if (!per_fault_record(m.name, m.labels)) continue;
    const CellKey cell = cell_key(m.name, m.labels);
    const auto& [fault, occurrence, key] = cell;
    bool known = false;
    for (const auto& col : c.columns) known = known || col.key == key;
    if (!known) c.columns.push_back({key, column_title(key), m.name});
    c.at[cell] = &m;
    std::pair<std::string, std::string> orphan{fault, occurrence};
    if (!has_fault(run, fault, occurrence) && std::find(c.orphans.begin(), c.orphans.end(), orphan) == c.orphans.end())
      c.orphans.push_back(orphan);
  }
  if (run.comparison)
    for (const auto& cmp : run.comparison->metrics)
      if (per_fault_record(cmp.name, cmp.labels)) c.compared[cell_key(cmp.name, cmp.labels)].push_back(&cmp);
  return c;
}

std::string value_text(const MetricRecord& m) {
  if (m.name == kRetention && m.unit == "ratio") return fmt::format("{:.0f} %", m.value * 100);
  return format_unit(m.value, m.unit);
}

std::string cells_html(const Cells& c, const std::string& fault, const std::string& occurrence) {
  std::string out;
  for (const auto& col : c.columns) {
    CellKey key{fault, occurrence, col.key};
    if (!c.at.contains(key)) std::get<1>(key) = "";
    auto it = c.at.find(key);
    if (it == c.at.end()) {
      out += "<td class=\"num none\">&ndash;</td>";
      continue;
    }
    std::string compared;
    if (auto cmp = c.compared.find(key); cmp != c.compared.end())
      for (const auto* one : cmp->second) compared += comparison_html(*one);
    out += fmt::format("<td class=\"num\">{}{}</td>", escape(value_text(*it->second)), compared);
  }
  return out;
}

std::string head_html(const Cells& c) {
  std::string out = "<div class=\"scroll\"><table class=\"data faults-impact\">\n<thead><tr><th>fault</th><th>type</th>"
                    "<th>targets</th>";
  for (const auto& col : c.columns)
    out += fmt::format("<th class=\"num\" title=\"{}\">{}{}</th>", escape(col.key), escape(col.title),
                       col.metric == kRetention ? "<br><span class=\"lbl\">of baseline</span>" : "");
  return out + "</tr></thead>\n<tbody>\n";
}

}  // namespace

bool per_fault_record(std::string_view name, const Labels& labels) {
  return labels.contains("fault") || (name == kRetention && label(labels, "phase").starts_with("fault:"));
}

std::string fault_table_html(const RunResult& run) {
  const Cells c = collect(run);
  if (run.faults.empty() && c.orphans.empty())
    return "<p class=\"empty\">No faults were injected in this run.</p>\n";
  std::string out =
      "<p class=\"note\">One row per fault occurrence. Time to detect and time to recover count from the fault's "
      "application; lost steps were computed again after the recovery; throughput retention is the throughput in "
      "the fault's window against the baseline phase's (pooled over the windows of a repeated fault). &ndash;: no "
      "record, as when the fault did not disrupt training or its recovery did not complete.</p>\n";
  out += head_html(c);
  const auto swatches = fault_swatches(run);
  for (std::size_t i = 0; i < run.faults.size(); ++i) {
    const auto& f = run.faults[i];
    out += fmt::format("<tr><td class=\"first\">{}{}</td><td><code>{}</code></td><td>{}</td>{}</tr>\n",
                       fault_name_html(f, swatches[i]), f.applied_at_s ? "" : " <span class=\"lbl\">not applied</span>",
                       escape(f.type), escape(targets_text(f)), cells_html(c, f.name, std::to_string(f.occurrence)));
  }
  for (const auto& [name, occurrence] : c.orphans)
    out += fmt::format("<tr><td class=\"first\">{}{}</td><td></td><td></td>{}</tr>\n", escape(name),
                       occurrence.empty() || occurrence == "1" ? "" : " #" + escape(occurrence),
                       cells_html(c, name, occurrence));
  return out + "</tbody></table></div>\n";
}

}  // namespace chaosbench::reports::html

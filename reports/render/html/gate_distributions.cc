#include "reports/render/html/gate_distributions.h"

#include <algorithm>
#include <fmt/format.h>

#include "reports/gate/gate_rows.h"
#include "reports/render/html/distribution_plot.h"
#include "reports/render/html/html_text.h"

namespace chaosbench::reports::html {
namespace {

using gate_detail::p_text;
using gate_detail::signed_pct;

int status_rank(GateStatus s) { return s == GateStatus::kFail ? 0 : s == GateStatus::kWarn ? 1 : 2; }

// "<code>comm/latency</code> overall · bytes=1 KiB p99": what the row measures.
std::string row_name(const MetricComparison& c) {
  const std::string labels = labels_text(c.labels);
  const std::string phase = label(c.labels, "phase");
  return fmt::format("<code>{}</code> <span class=\"lbl\">{}{}{}</span> <span class=\"stat\">{}</span>", escape(c.name),
                     escape(phase), !phase.empty() && !labels.empty() ? " · " : "", escape(labels), escape(c.stat));
}

// " [+15.0%, +25.0%]": the change's confidence interval, "" without one.
std::string ci_text(const MetricComparison& c) {
  return c.ci_low && c.ci_high ? fmt::format(" [{}, {}]", signed_pct(*c.ci_low), signed_pct(*c.ci_high)) : "";
}

// "+20.0% [+15.0%, +25.0%] · p 0.001": the change, its interval and p.
std::string change_text(const MetricComparison& c) {
  return signed_pct(c.change) + ci_text(c) + (c.p_value ? " · p " + p_text(*c.p_value) : "");
}

// "10 ms → 12 ms · +20.0% [+15.0%, +25.0%] · p 0.001 · 5 vs 5 runs · tolerance 5%", each
// part kept on one line.
std::string numbers_html(const MetricComparison& c) {
  const std::string n = c.basis == "runs" ? fmt::format("{} vs {} runs", c.n_baseline, c.n_current)
                        : c.stat == "value" ? std::string("1 value each")
                                            : fmt::format("n {} vs {} samples", c.n_baseline, c.n_current);
  const std::string p = c.p_value ? "<span>p " + escape(p_text(*c.p_value)) + "</span> · " : "";
  return fmt::format("<span>{} → {}</span> · <span>{}{}</span> · {}<span>{}</span> · <span>tolerance {:g}%</span>",
                     escape(format_unit(c.baseline, c.unit)), escape(format_unit(c.current, c.unit)),
                     signed_pct(c.change), ci_text(c), p, n, c.tolerance * 100);
}

// The row's card; `head` false under a line of the list that already names the row.
std::string card(const MetricComparison& c, bool head = true) {
  const std::string status(to_string(c.status));
  return fmt::format("<div class=\"dist-card {}\">{}<div class=\"dist-nums\">{}</div>{}<div class=\"note\">{}</div>"
                     "<div class=\"why\">{}</div></div>\n",
                     escape(status), head ? fmt::format("<div class=\"dist-head\">{} {}</div>", badge(status), row_name(c)) : "",
                     numbers_html(c), distribution_svg(c), escape(distribution_caption(c)), escape(c.reason));
}

// A line that opens to the row's card.
std::string list_row(const MetricComparison& c) {
  return fmt::format("<details class=\"dist-row\"><summary>{} {} <span class=\"dist-change\">{}</span></summary>{}"
                     "</details>\n",
                     badge(to_string(c.status)), row_name(c), escape(change_text(c)), card(c, false));
}

// A glyph of the legend: a 22 x 14 SVG drawn with the plots' own classes.
std::string glyph(const std::string& marks) {
  return fmt::format("<svg class=\"dist glyph\" viewBox=\"0 0 22 14\">{}</svg>", marks);
}

// The legend, with the kinds of dots the rows have.
std::string legend(const std::vector<const MetricComparison*>& rows) {
  bool runs = false, quantiles = false;
  for (const auto* r : rows) {
    runs = runs || r->basis == "runs";
    quantiles = quantiles || (r->basis != "runs" && r->stat != "value");
  }
  const std::string run_dots = glyph("<g class=\"side b\"><circle class=\"p\" cx=\"6\" cy=\"5\" r=\"2.6\"/>"
                                     "<circle class=\"p\" cx=\"15\" cy=\"9\" r=\"2.6\"/></g>");
  const std::string quantile_dots = glyph("<g class=\"side b\"><circle class=\"q\" cx=\"6\" cy=\"5\" r=\"2.6\"/>"
                                          "<circle class=\"q\" cx=\"15\" cy=\"9\" r=\"2.6\"/></g>");
  return "<div class=\"dist-legend\">"
         "<span>" + glyph("<rect class=\"band\" x=\"4\" y=\"0\" width=\"14\" height=\"14\"/>"
                          "<line class=\"centre\" x1=\"11\" y1=\"0\" x2=\"11\" y2=\"14\"/>"
                          "<line class=\"edge\" x1=\"18\" y1=\"0\" x2=\"18\" y2=\"14\"/>") +
         "the baseline's statistic ± tolerance; dashed: the regression side</span>"
         "<span>" + glyph("<g class=\"side b\"><line class=\"whisker\" x1=\"1\" y1=\"7\" x2=\"21\" y2=\"7\"/>"
                          "<rect class=\"box\" x=\"6\" y=\"2\" width=\"10\" height=\"10\"/>"
                          "<line class=\"median\" x1=\"10\" y1=\"2\" x2=\"10\" y2=\"12\"/></g>") +
         "quartiles and median; whiskers to the smallest and largest point</span>" +
         (runs ? "<span>" + run_dots + "one run's figure</span>" : "") +
         (quantiles ? "<span>" + quantile_dots + "a quantile (0, 5, …, 100 %) of a side's samples</span>" : "") +
         "<span>" + glyph("<g class=\"side b\"><polygon class=\"mark\" points=\"11,1 16,7 11,13 6,7\"/></g>") +
         "the statistic compared</span></div>\n";
}

std::string intro(const Comparison& cmp, const std::vector<const MetricComparison*>& rows) {
  std::size_t count[3] = {0, 0, 0};
  for (const auto* r : rows) ++count[status_rank(r->status)];
  return fmt::format(
      "<p>Against baseline run <code>{}</code>{}: {} &mdash; {} FAIL, {} WARN, {} PASS of {} gated rows.</p>\n"
      "<p class=\"note\">Each plot puts the baseline (top) over this run (bottom) on one axis; the band is the "
      "baseline's statistic ± the row's tolerance, its dashed edge the side a regression leaves by. Repeated runs "
      "(a figure per run) fail when this run's ◆ lies beyond that edge and Welch's t test, Holm-adjusted over the "
      "rows, is significant at alpha {}; one run per side (quantiles of its samples) fails when Mann-Whitney U is "
      "significant and the whole {:g}% confidence interval of the change lies beyond the tolerance plus the "
      "within-run noise (the reason says how much). Hover a dot, a diamond or the band for its value.</p>\n",
      escape(cmp.baseline_run), cmp.baseline_started_at.empty() ? "" : fmt::format(" of {}", escape(cmp.baseline_started_at)),
      badge(to_string(cmp.verdict)), count[0], count[1], count[2], rows.size(), cmp.alpha, (1 - cmp.alpha) * 100);
}

// Which rows are plotted as cards and which are listed, each in the section's order.
struct Split {
  std::vector<const MetricComparison*> cards, listed;
};

// How far a row's change went towards failing: its change in the worse direction in
// tolerances (1 at the band's edge).
double towards_failing(const MetricComparison& c) {
  return common::worse_sign(c.better) * c.change / std::max(c.tolerance, 1e-9);
}

// Every row when they are few; else the FAIL and WARN rows (up to kExpandedRows), then,
// up to kNearestPassing cards, the passing rows nearest their tolerance; the rest listed.
Split split_rows(const std::vector<const MetricComparison*>& rows) {
  Split split;
  if (rows.size() <= kExpandedRows) {
    split.cards = rows;
    return split;
  }
  std::vector<const MetricComparison*> passing;
  for (const auto* r : rows)
    if (r->status == GateStatus::kPass) passing.push_back(r);
    else if (split.cards.size() < kExpandedRows) split.cards.push_back(r);
  std::stable_sort(passing.begin(), passing.end(), [](const MetricComparison* a, const MetricComparison* b) {
    return towards_failing(*a) > towards_failing(*b);
  });
  for (std::size_t i = 0; i < passing.size() && split.cards.size() < kNearestPassing; ++i) split.cards.push_back(passing[i]);
  for (const auto* r : rows)
    if (std::find(split.cards.begin(), split.cards.end(), r) == split.cards.end()) split.listed.push_back(r);
  return split;
}

}  // namespace

std::vector<const MetricComparison*> rows_by_status(const Comparison& comparison) {
  std::vector<const MetricComparison*> rows;
  for (const auto& m : comparison.metrics) rows.push_back(&m);
  std::stable_sort(rows.begin(), rows.end(), [](const MetricComparison* a, const MetricComparison* b) {
    return status_rank(a->status) < status_rank(b->status);
  });
  return rows;
}

std::string gate_section_html(const RunResult& run) {
  if (!run.comparison) return "";
  const auto rows = rows_by_status(*run.comparison);
  std::string out = "<section id=\"gate\"><h2>Baseline gate: distributions</h2>\n" + intro(*run.comparison, rows);
  if (rows.empty()) return out + "<p class=\"empty\">The comparison has no gated rows.</p>\n</section>\n";
  out += legend(rows);
  const auto [cards, listed] = split_rows(rows);
  const bool nearest = !listed.empty() && !cards.empty() && cards.back()->status == GateStatus::kPass;
  if (nearest)
    out += "<p class=\"note\">Plotted: every FAIL and WARN row, then the passing rows nearest their tolerance (the "
           "largest change in the worse direction); the list below has the others.</p>\n";
  if (!cards.empty()) {
    out += "<div class=\"dist-grid\">\n";
    for (const auto* r : cards) out += card(*r);
    out += "</div>\n";
  }
  if (!listed.empty()) {
    std::size_t count[3] = {0, 0, 0};
    for (const auto* r : listed) ++count[status_rank(r->status)];
    std::string what;
    for (auto [n, name] : {std::pair{count[0], "FAIL"}, {count[1], "WARN"}, {count[2], "PASS"}})
      if (n) what += fmt::format("{}{} {}", what.empty() ? "" : ", ", n, name);
    out += fmt::format("<details class=\"dist-more\"><summary>{} {}rows ({}): a line each, open one for its plot"
                       "</summary>\n<div class=\"dist-list\">\n",
                       listed.size(), cards.empty() ? "" : "more ", what);
    for (const auto* r : listed) out += list_row(*r);
    out += "</div></details>\n";
  }
  return out + "</section>\n";
}

std::string gate_nav_html(const RunResult& run) {
  return run.comparison ? "<a href=\"#gate\">Baseline gate</a>" : "";
}

}  // namespace chaosbench::reports::html

#include "reports/render/html/goodput_page.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <optional>
#include <vector>
#include <utility>

#include "reports/goodput/goodput_assumptions.h"
#include "reports/goodput/goodput_table.h"
#include "reports/render/html/html_text.h"
#include "reports/render/html/line_chart.h"

namespace chaosbench::reports::html {
namespace {

constexpr const char* kStyle =
    "body{font-family:system-ui,sans-serif;margin:24px auto;max-width:1100px;padding:0 16px;color:#1d232a}"
    "h1{font-size:22px}h2{font-size:17px;margin-top:28px}"
    "table{border-collapse:collapse;font-size:13px;font-variant-numeric:tabular-nums}"
    "th,td{border-bottom:1px solid #e3e6ea;padding:4px 8px;text-align:right;white-space:nowrap}"
    "th:first-child,td:first-child{text-align:left}.text{text-align:left}"
    "td.text{white-space:normal;overflow-wrap:anywhere}"
    "tr.run td{background:#f3f7ff}td.no{color:#b3261e}.note{color:#5f6b76;font-size:12px}"
    ".prediction{padding:10px 12px;border-left:4px solid #3b6fd8;background:#f6f8fb}"
    "svg.chart{width:100%;max-width:760px;height:auto;display:block;margin:8px 0}"
    "li{margin:4px 0;font-size:13.5px}";

std::string table_html(const TextRows& rows, const std::vector<std::string>& notes, std::size_t text_columns,
                       const std::vector<bool>& run_rows) {
  std::string out = "<table><thead><tr>";
  for (std::size_t c = 0; c < rows.front().size(); ++c)
    out += fmt::format("<th{}>{}</th>", c > 0 && c < text_columns ? " class=\"text\"" : "", escape(rows.front()[c]));
  out += "</tr></thead><tbody>";
  for (std::size_t i = 1; i < rows.size(); ++i) {
    out += i < run_rows.size() && run_rows[i] ? "<tr class=\"run\">" : "<tr>";
    for (std::size_t c = 0; c < rows[i].size(); ++c) {
      const bool no = c + 1 == rows[i].size() && rows[i][c].starts_with("no");
      const bool text = c > 0 && c < text_columns;
      const char* cls = no ? " class=\"no\"" : text ? " class=\"text\"" : "";
      const std::string title = no && i < notes.size() ? " title=\"" + escape(notes[i]) + "\"" : "";
      out += fmt::format("<td{}{}>{}</td>", cls, title, escape(rows[i][c]));
    }
    out += "</tr>";
  }
  return out + "</tbody></table>";
}

std::string nodes_tick(double n) {
  if (n >= 1e6) return fmt::format("{:g}M", n / 1e6);
  if (n >= 1e3) return fmt::format("{:g}k", n / 1e3);
  return fmt::format("{:g}", n);
}

std::string duration_tick(double s) { return format_duration_s(s); }

// Round durations between lo and hi (1 min, 5 min, 1 h, 1 d, ...), at most 7: every
// second or third of them when more fit.
std::vector<double> duration_ticks(double lo, double hi) {
  constexpr double kRound[] = {1,    2,    5,    10,    15,    30,    60,    120,    300,     600,     900,
                               1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 432000, 864000, 2592000};
  std::vector<double> in;
  for (double t : kRound)
    if (t >= lo && t <= hi) in.push_back(t);
  const std::size_t step = (in.size() + 6) / 7;
  std::vector<double> out;
  for (std::size_t i = 0; i < in.size(); i += std::max<std::size_t>(step, 1)) out.push_back(in[i]);
  return out;
}

// A goodput chart (y: 0..100 %) over a logarithmic x axis.
LineChart goodput_chart(std::string title, std::string x_label, std::string (*tick)(double)) {
  LineChart c;
  c.title = std::move(title);
  c.x_label = std::move(x_label);
  c.y_label = "goodput %";
  c.log_x = true;
  c.x_tick_text = tick;
  return c;
}

double percent(const std::optional<double>& fraction) { return fraction ? 100 * *fraction : NAN; }

std::string nodes_chart(const GoodputReport& r) {
  LineChart c = goodput_chart("Goodput against the number of nodes", "nodes N (log)", nodes_tick);
  LineChart::Line current{"MC, current interval", "#3b6fd8", "", {}, {}};
  LineChart::Line optimal{"MC, optimal interval", "#1a9c5b", "", {}, {}};
  LineChart::Line daly{"Daly exact, current", "#3b6fd8", "5 4", {}, {}};
  for (const auto& row : r.rows) {
    current.add(row.nodes, 100 * row.monte_carlo.goodput);
    optimal.add(row.nodes, percent(row.goodput_at_opt));
    daly.add(row.nodes, percent(row.daly_exact));
  }
  c.lines = {current, optimal, daly};
  if (r.inputs.run_nodes) c.markers.push_back({static_cast<double>(*r.inputs.run_nodes), "the run's N", "#6b4fbb"});
  return line_chart_svg(c);
}

std::string interval_chart(const GoodputReport& r) {
  const auto& curve = r.curve;
  LineChart c = goodput_chart(fmt::format("Goodput against the checkpoint interval at N = {}", curve.nodes),
                              "checkpoint interval (log)", duration_tick);
  LineChart::Line mc{"Monte Carlo", "#3b6fd8", "", {}, {}};
  LineChart::Line daly{"Daly exact", "#d9822b", "5 4", {}, {}};
  LineChart::Line first{"first order", "#8a939c", "2 3", {}, {}};
  double lo = 100, hi = 0;
  for (const auto& p : curve.points) {
    mc.add(p.interval_s, 100 * p.monte_carlo);
    daly.add(p.interval_s, percent(p.daly_exact));
    first.add(p.interval_s, 100 * p.first_order);
    lo = std::min(lo, 100 * p.monte_carlo);
    hi = std::max(hi, 100 * p.monte_carlo);
  }
  // The y range follows the Monte Carlo curve, so the optimum's neighbourhood is visible.
  c.y_lo = std::max(0.0, std::floor(lo / 5) * 5 - 5);
  c.y_hi = std::min(100.0, std::ceil(hi / 5) * 5 + 5);
  c.lines = {mc, daly, first};
  if (!curve.points.empty()) c.x_ticks = duration_ticks(curve.points.front().interval_s, curve.points.back().interval_s);
  c.markers.push_back({curve.current_s, "current", "#6b4fbb"});
  if (curve.young_s) c.markers.push_back({*curve.young_s, "Young", "#8a939c"});
  if (curve.daly_s) c.markers.push_back({*curve.daly_s, "Daly", "#d9822b"});
  if (curve.monte_carlo_opt_s) c.markers.push_back({*curve.monte_carlo_opt_s, "MC optimum", "#1a9c5b"});
  return line_chart_svg(c);
}

std::string list_html(const std::vector<std::string>& items) {
  std::string out = "<ul>";
  for (const auto& i : items) out += "<li>" + escape(i) + "</li>";
  return out + "</ul>";
}

}  // namespace

std::string goodput_page_html(const GoodputReport& r) {
  std::string out = fmt::format("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>chaosbench "
                                "goodput model</title><style>{}</style></head><body><h1>Goodput at scale</h1>",
                                kStyle);
  if (r.run)
    out += fmt::format("<p class=\"prediction\">{}<br>{}</p>", escape(goodput_prediction_text(r)),
                       escape(goodput_ettr_text(r)));
  std::vector<bool> run_rows{false};
  for (const auto& row : r.rows) run_rows.push_back(row.run_nodes);
  out += fmt::format("<h2>Goodput per node count (checkpoint interval {})</h2>",
                     escape(format_duration_s(r.inputs.checkpoint_interval_s.value)));
  out += table_html(goodput_table_rows(r), goodput_table_notes(r), 0, run_rows);
  out += "<p class=\"note\">Goodput in % of wall time at the current interval: first-order formula, Daly's exact "
         "expression, Monte Carlo; the optimal interval by Young, Daly and the Monte Carlo, and the Monte Carlo's "
         "goodput there; ETTR at the current interval; * the run's own N. Hover a \"no\" for the reason.</p>";
  out += "<h2>Goodput against N</h2>" + nodes_chart(r);
  out += fmt::format("<h2>Goodput against the checkpoint interval at N = {} (job MTBF {})</h2>", r.curve.nodes,
                     escape(format_duration_s(r.curve.job_mtbf_s)));
  out += interval_chart(r);
  out += "<h2>Inputs</h2>" + table_html(goodput_input_rows(r), {}, 4, {});
  if (!r.inputs.notes.empty()) out += "<h2>Notes</h2>" + list_html(r.inputs.notes);
  out += "<h2>Assumptions</h2>" + list_html(r.assumptions);
  return out + "</body></html>\n";
}

}  // namespace chaosbench::reports::html

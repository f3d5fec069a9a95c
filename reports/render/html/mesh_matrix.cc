#include "reports/render/html/mesh_matrix.h"

#include <cmath>
#include <fmt/format.h>
#include <map>
#include <set>

#include "reports/diagnosis/diagnoser.h"
#include "reports/diagnosis/diagnosis_output.h"
#include "reports/render/html/html_text.h"
#include "reports/render/html/rank_heatmap.h"

namespace chaosbench::reports::html {
namespace {

// A phase's matrix: (src, dst) -> median round trip (ms) and mean loss (%).
struct Cell {
  double rtt = NAN, loss = NAN;
};
using Matrix = std::map<std::pair<std::string, std::string>, Cell>;

std::string culprits_html(const Diagnosis& d) {
  if (d.culprits.empty())
    return fmt::format("<p>Nothing stands out: no node, link, NIC or device departed from its own baseline and its "
                       "peers for 3 of 4 windows ({} windows of {:.1f} s judged, from {}).</p>\n",
                       d.windows, d.window_s, escape(d.inputs.empty() ? "no measurements" : fmt::format("{}", fmt::join(d.inputs, ", "))));
  std::string out = "<ol class=\"culprits\">\n";
  for (const auto& c : d.culprits) {
    out += fmt::format("<li><b>{}</b>\n<ul>\n", escape(culprit_line(c)));
    for (const auto& e : c.evidence) out += fmt::format("<li>at {:.0f} s: {}</li>\n", e.t, escape(e.text));
    out += "</ul></li>\n";
  }
  return out + "</ol>\n";
}

std::string matrix_html(const std::string& phase, const Matrix& m, const Matrix& first) {
  std::set<std::string> nodes;
  for (const auto& [k, c] : m) nodes.insert(k.first), nodes.insert(k.second);
  std::string out = fmt::format("<h3>{}</h3>\n<table class=\"heat mesh\" style=\"width:auto;min-width:0\"><tr><th>src \\ dst</th>",
                                escape(phase));
  for (const auto& n : nodes) out += fmt::format("<th>{}</th>", escape(n));
  out += "</tr>\n";
  for (const auto& src : nodes) {
    out += fmt::format("<tr><th>{}</th>", escape(src));
    for (const auto& dst : nodes) {
      auto it = m.find({src, dst});
      if (src == dst || it == m.end() || !std::isfinite(it->second.rtt)) {
        out += "<td style=\"background:#eef2f6\"></td>";
        continue;
      }
      const Cell& c = it->second;
      auto ref = first.find({src, dst});
      const double base = ref != first.end() && ref->second.rtt > 0 ? ref->second.rtt : c.rtt;
      // A step under 1 ms stays white: idle round trips are tens of microseconds apart.
      const double ratio = c.rtt - base < 1.0 ? 1.0 : c.rtt / base;
      const std::string loss = std::isfinite(c.loss) && c.loss > 0 ? fmt::format(" {:.0f}%", c.loss) : "";
      const double shade = std::isfinite(c.loss) && c.loss >= 5 ? 4.0 : ratio;
      out += fmt::format("<td class=\"mono\" style=\"background:{};color:{};width:auto;padding:0 4px\" title=\"{} to {}: "
                         "{:.3f} ms{}\">{}{}</td>", heat_colour(shade), shade >= 2 ? "#fff" : "inherit", escape(src),
                         escape(dst), c.rtt, loss.empty() ? "" : ", loss" + loss,
                         c.rtt < 1 ? fmt::format("{:.3f}", c.rtt) : fmt::format("{:.2f}", c.rtt), loss);
    }
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

}  // namespace

std::string diagnosis_section_html(const RunResult& run) {
  std::string out = "<p class=\"note\">Named from the run's measurements alone (the link mesh, the nodes' CPU "
                    "telemetry, the ranks' compute times), never from its fault list: what <code>chaosbench diagnose "
                    "results.json</code> prints. See docs/diagnosis.md.</p>\n";
  out += culprits_html(diagnose_series(run.series, run.processes));
  std::vector<std::string> order;
  std::map<std::string, Matrix> phases;
  for (const auto& m : run.metrics) {
    if (m.name != "net/pair_rtt" && m.name != "net/pair_loss") continue;
    const std::string phase = label(m.labels, "phase");
    if (!phases.count(phase)) order.push_back(phase);
    Cell& c = phases[phase][{label(m.labels, "src"), label(m.labels, "dst")}];
    (m.name == "net/pair_rtt" ? c.rtt : c.loss) = m.name == "net/pair_rtt" && m.stats ? m.stats->p50 : m.value;
  }
  if (phases.empty()) return out + "<p class=\"empty\">This run had no link mesh (it runs where the nodes are network "
                                   "namespaces; <code>\"mesh\": false</code> turns it off).</p>\n";
  out += "<p class=\"note\">The link mesh per phase: each cell the median round trip (ms) from the row's node to the "
         "column's and back, coloured against the same pair in the first phase; loss in % where probes were lost.</p>\n";
  for (const auto& phase : order) out += matrix_html(phase, phases[phase], phases[order.front()]);
  return out;
}

}  // namespace chaosbench::reports::html

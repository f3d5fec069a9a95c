#include "reports/render/html_report.h"

#include <fmt/format.h>
#include <map>
#include <stdexcept>

#include "reports/render/html/chart_data.h"
#include "reports/render/html/embedded_assets.h"
#include "reports/render/html/fault_table.h"
#include "reports/render/html/gate_distributions.h"
#include "reports/render/html/html_text.h"
#include "reports/render/html/phase_table.h"
#include "reports/render/html/probe_track.h"
#include "reports/render/html/rank_heatmap.h"
#include "reports/render/html/repeat_runs.h"
#include "reports/render/html/mesh_matrix.h"
#include "reports/render/html/sections.h"

namespace chaosbench::reports {
namespace {

// Fills each {{NAME}} of the template once, in one pass: what is inserted is never scanned
// again, so a value that happens to contain braces stays as it is.
std::string fill(std::string_view skeleton, const std::map<std::string, std::string>& values) {
  std::size_t size = skeleton.size();
  for (const auto& [name, value] : values) size += value.size();
  std::string out;
  out.reserve(size);
  std::size_t pos = 0;
  while (true) {
    std::size_t open = skeleton.find("{{", pos);
    if (open == std::string_view::npos) break;
    std::size_t close = skeleton.find("}}", open + 2);
    if (close == std::string_view::npos) break;
    std::string name(skeleton.substr(open + 2, close - open - 2));
    auto it = values.find(name);
    if (it == values.end()) throw std::logic_error("report_template.html: unknown placeholder {{" + name + "}}");
    out.append(skeleton.substr(pos, open - pos));
    out += it->second;
    pos = close + 2;
  }
  out.append(skeleton.substr(pos));
  return out;
}

// The timelines' legend (the faults) and a note where there is nothing to chart: a combined
// result of repeated runs leaves its series to each run's own report.
std::string timelines_html(const RunResult& run) {
  using namespace html;
  std::string out = faults_html(run) + probe_track_html(run);
  if (combined_without_series(run)) return out + per_run_note(run, "time series");
  if (timeline_metrics(run).empty()) out += "<p class=\"empty\">This run recorded no time series.</p>\n";
  return out;
}

}  // namespace

std::string render_html(const RunResult& run) {
  using namespace html;
  const std::string_view verdict = to_string(run.verdict);
  std::string title = fmt::format("{} {} - chaosbench", run.scenario_name, verdict);
  std::map<std::string, std::string> values{
      {"GENERATOR", escape(fmt::format("{} {}", run.tool_name, run.tool_version))},
      {"TITLE", escape(title)},
      {"HEADING", escape(fmt::format("chaosbench report: {}", run.scenario_name))},
      {"SUBHEADING", escape(fmt::format("{} · {:.1f} s · seed {} · run {}", run.started_at, run.duration_s, run.seed,
                                        run.run_id))},
      {"VERDICT", verdict_html(run)},
      {"GATE_NAV", gate_nav_html(run)},
      {"GATE", gate_section_html(run)},
      {"TIMELINES", timelines_html(run)},
      {"PHASE_TABLE", phase_table_html(run)},
      {"FAULT_TABLE", fault_table_html(run)},
      {"HEATMAP", combined_without_series(run) ? per_run_note(run, "per-rank series") : rank_heatmap_html(run)},
      {"DIAGNOSIS", diagnosis_section_html(run)},
      {"RECOVERY", recovery_html(run)},
      {"ADVICE", advice_html(run)},
      {"ENVIRONMENT", environment_html(run)},
      {"SCENARIO", escape(scenario_text(run))},
      {"DATA", chart_data_json(run)},
      {"CHART_JS", std::string(chart_js())},
  };
  return fill(report_template(), values);
}

}  // namespace chaosbench::reports

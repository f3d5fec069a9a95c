#include "reports/render/html/repeat_runs.h"

#include <fmt/format.h>

#include "reports/render/html/html_text.h"
#include "reports/model/text_format.h"

namespace chaosbench::reports::html {
namespace {

// A run's own report, relative to the combined result's: "run-01/report.html".
std::string report_link(const RepeatedRun& r) {
  if (r.dir.empty()) return escape(r.run_id);
  return fmt::format("<a href=\"{0}/report.html\">{0}</a>", escape(r.dir));
}

}  // namespace

std::string repeat_runs_html(const RunResult& run) {
  if (!run.repeat) return "";
  const auto& rep = *run.repeat;
  std::string out = fmt::format("<p class=\"repeat\">This is a combined result: {}. Its values are the medians over the "
                                "runs, its checks judged on them; each run's own report has its timelines, events and "
                                "processes.</p>\n",
                                escape(repeat_text(rep)));
  if (rep.runs.empty()) return out;
  out += fmt::format("<details open><summary>The {} runs</summary>\n<div class=\"scroll\"><table class=\"data runs\"><thead>"
                     "<tr><th>run</th><th>verdict</th><th class=\"num\">duration</th><th>started</th><th>run id</th>"
                     "<th>reason</th></tr></thead><tbody>\n",
                     rep.runs.size());
  for (const auto& r : rep.runs)
    out += fmt::format("<tr><td>{}</td><td>{}</td><td class=\"num\">{:.1f} s</td><td>{}</td><td><code>{}</code></td>"
                       "<td>{}</td></tr>\n",
                       report_link(r), badge(to_string(r.verdict)), r.duration_s, escape(r.started_at), escape(r.run_id),
                       escape(r.reason));
  return out + "</tbody></table></div></details>\n";
}

bool combined_without_series(const RunResult& run) { return run.repeat && run.series.empty() && run.events.empty(); }

std::string per_run_note(const RunResult& run, std::string_view what) {
  const auto& runs = run.repeat->runs;
  std::string where;
  if (!runs.empty())
    where = runs.size() == 1 ? fmt::format(" ({}/report.html)", runs.front().dir)
                             : fmt::format(" ({}/report.html … {}/report.html)", runs.front().dir, runs.back().dir);
  return fmt::format("<p class=\"empty\">A combined result of {} runs keeps no {}: each run's own report has them{}.</p>\n",
                     runs.size(), escape(what), escape(where));
}

}  // namespace chaosbench::reports::html

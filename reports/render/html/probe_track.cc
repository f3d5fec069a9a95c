#include "reports/render/html/probe_track.h"

#include <algorithm>
#include <fmt/format.h>

#include "reports/render/html/chart_data.h"
#include "reports/render/html/html_text.h"
#include "reports/model/probe_spans.h"
#include "reports/model/text_format.h"

namespace chaosbench::reports::html {
namespace {

// Where [start, end] lies on a lane of `duration` seconds: "left:12.5%;width:3%". A
// stretch too short to see keeps a sliver of 0.3 % so that its tooltip can be reached.
std::string placement(double start, double end, double duration) {
  auto pct = [&](double t) { return std::clamp(t / duration * 100, 0.0, 100.0); };
  const double left = pct(start);
  const double width = std::max(pct(end) - left, 0.3);
  return fmt::format("left:{:.2f}%;width:{:.2f}%", left, std::min(width, 100 - left));
}

std::string lane(const std::string& name, const std::string& detail, const std::string& stretches) {
  return fmt::format("<div class=\"lane\"><div class=\"name\">{}<span class=\"lbl\">{}</span></div>"
                     "<div class=\"track\">{}</div></div>\n",
                     escape(name), escape(detail), stretches);
}

std::string abort_mark(const RunResult& run, double duration) {
  if (!run.abort) return "";
  return fmt::format("<span class=\"abort-mark\" style=\"left:{:.2f}%\" title=\"aborted: {}\"></span>",
                     std::clamp(run.abort->decided_s / duration * 100, 0.0, 100.0), escape(abort_text(*run.abort)));
}

// The fault windows in the colours the charts shade them with (fault_swatch's order).
std::string fault_lane(const RunResult& run, double duration, const std::string& mark) {
  std::string stretches;
  std::size_t i = 0;
  for (const auto& f : run.faults) {
    if (!f.applied_at_s) continue;
    const double end = f.reverted_at_s.value_or(duration);
    std::string name = f.occurrence > 1 ? fmt::format("{} #{}", f.name, f.occurrence) : f.name;
    stretches += fmt::format("<span class=\"stretch\" style=\"{};background:{}\" title=\"{} ({}) {:.2f} s – {:.2f} s\"></span>",
                             placement(*f.applied_at_s, end, duration), fault_swatch(i++), escape(name), escape(f.type),
                             *f.applied_at_s, end);
  }
  return stretches.empty() ? "" : lane("faults", "", stretches + mark);
}

std::string probe_lane(const ProbeRecord& p, double duration, const std::string& mark) {
  std::string stretches;
  for (const auto& s : probe_spans(p, duration)) {
    std::string tip = fmt::format("{} {:.2f} s – {:.2f} s", s.ok ? "pass" : "FAIL", s.start_s, s.end_s);
    if (s.value) tip += fmt::format(", value {:g}", *s.value);
    if (!s.evidence.empty()) tip += ": " + s.evidence;
    stretches += fmt::format("<span class=\"stretch {}\" style=\"{}\" title=\"{}\"></span>", s.ok ? "pass" : "fail",
                             placement(s.start_s, s.end_s, duration), escape(tip));
  }
  return lane(p.name, fmt::format("{} · {} · {} of {} failed", p.kind, p.mode, p.failures, p.evaluations), stretches + mark);
}

}  // namespace

std::string probe_track_html(const RunResult& run) {
  if (run.probes.empty() && !run.abort) return "";
  double duration = timeline_duration(run);
  if (run.abort) duration = std::max({duration, run.abort->decided_s, run.abort->reverted_s.value_or(0.0)});
  if (!(duration > 0)) duration = 1;
  const std::string mark = abort_mark(run, duration);
  std::string out = "<h3>Probes</h3>\n<p class=\"note\">One lane per probe from its first evaluation: green while it "
                    "passed, red while it failed (hover a stretch for the evidence)";
  out += run.abort ? "; the dashed line is the abort.</p>\n" : ".</p>\n";
  out += "<div class=\"probes\">\n" + fault_lane(run, duration, mark);
  for (const auto& p : run.probes) out += probe_lane(p, duration, mark);
  out += fmt::format("<div class=\"lane axis\"><div class=\"name\"></div><div class=\"track\"><span>0 s</span>"
                     "<span class=\"end\">{:.1f} s</span></div></div>\n</div>\n",
                     duration);
  return out;
}

}  // namespace chaosbench::reports::html

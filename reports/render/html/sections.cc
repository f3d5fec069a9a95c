#include "reports/render/html/sections.h"

#include <algorithm>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "reports/render/html/fault_table.h"
#include "reports/render/html/html_text.h"
#include "reports/render/html/phase_table.h"
#include "reports/render/html/repeat_runs.h"
#include "reports/model/text_format.h"
#include "reports/advice/tuning_advice.h"

namespace chaosbench::reports::html {
namespace {

constexpr std::size_t kMaxEvents = 60;

std::string unit_of(const RunResult& run, const std::string& metric) {
  for (const auto& m : run.metrics)
    if (m.name == metric) return m.unit;
  return "";
}

std::string checks_table(const RunResult& run, const std::vector<const CheckResult*>& checks) {
  std::string out = "<div class=\"scroll\"><table class=\"data\"><thead><tr><th>status</th><th>metric</th>"
                    "<th>labels</th><th class=\"num\">limit</th><th class=\"num\">value</th><th>message</th>"
                    "</tr></thead><tbody>\n";
  for (const auto* c : checks) {
    std::string unit = unit_of(run, c->metric);
    out += fmt::format("<tr><td>{}</td><td><code>{}</code></td><td class=\"lbl\">{}</td><td class=\"num\">{} {}</td>"
                       "<td class=\"num\">{}</td><td>{}</td></tr>\n",
                       badge(to_string(c->status)), escape(c->metric), escape(labels_text(c->labels, "")), escape(c->op),
                       escape(format_unit(c->threshold, unit)),
                       c->value ? escape(format_unit(*c->value, unit)) : "no record", escape(c->message));
  }
  return out + "</tbody></table></div>\n";
}

std::string kpi(const std::string& key, const std::string& value, const std::string& detail = "") {
  return fmt::format("<div class=\"kpi\"><div class=\"k\">{}</div><div class=\"v\">{}</div>{}</div>", escape(key),
                     escape(value), detail.empty() ? "" : fmt::format("<div class=\"d\">{}</div>", escape(detail)));
}

std::string fields_text(const Labels& fields) {
  std::string out;
  for (const auto& [k, v] : fields) out += fmt::format("{}{}={}", out.empty() ? "" : " ", k, label_to_string(v));
  return out;
}

// Why the run stopped itself, with the evidence, and how long reverting every fault took
// after the decision (fault/abort_latency).
std::string abort_banner(const RunResult& run) {
  if (!run.abort) return "";
  const auto& a = *run.abort;
  std::string latency = a.reverted_s ? fmt::format(" ({:.0f} ms after the decision)", (*a.reverted_s - a.decided_s) * 1000) : "";
  return fmt::format("<div class=\"abort-banner\"><strong>Aborted by {}</strong> at {:.2f} s{}{}<br>{}{}</div>\n",
                     escape(a.cause), a.decided_s, a.evidence.empty() ? "" : ": ", escape(a.evidence),
                     a.reverted_s ? fmt::format("Every fault was reverted at {:.2f} s", *a.reverted_s)
                                  : std::string("No fault was reverted after it"),
                     latency);
}

}  // namespace

std::string verdict_html(const RunResult& run) {
  const std::string verdict(to_string(run.verdict));
  std::vector<const CheckResult*> failed, all;
  for (const auto& c : run.checks) {
    all.push_back(&c);
    if (c.status != CheckStatus::kPass) failed.push_back(&c);
  }
  std::string why = run.reason;
  if (why.empty() && run.abort) why = fmt::format("Aborted by {}.", run.abort->cause);  // the banner below says more
  if (why.empty())
    why = run.verdict == Verdict::kPass ? fmt::format("Every check passed ({} of {}).", all.size(), all.size())
                            : fmt::format("{} of {} checks failed.", failed.size(), all.size());
  std::string upper = verdict;
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  std::string out = fmt::format(
      "<div class=\"verdict {}\"><span class=\"big\">{}</span><div class=\"why\"><strong>{}</strong><br>{}</div></div>\n",
      escape(verdict), escape(upper), escape(run.scenario_name), escape(why));
  out += abort_banner(run);
  out += repeat_runs_html(run);

  std::size_t applied = 0, fault_errors = 0;
  for (const auto& f : run.faults) {
    applied += f.applied_at_s ? 1 : 0;
    fault_errors += f.error.empty() ? 0 : 1;
  }
  out += "<div class=\"kpis\">";
  out += kpi("checks passed", fmt::format("{} / {}", all.size() - failed.size(), all.size()));
  out += kpi("faults applied", fmt::format("{} / {}", applied, run.faults.size()),
             fault_errors ? fmt::format("{} with errors", fault_errors) : "");
  out += kpi("duration", fmt::format("{:.1f} s", run.duration_s), fmt::format("{} phases", run.phases.size()));
  if (!run.probes.empty()) {
    std::size_t failing = 0;
    for (const auto& p : run.probes) failing += p.failures ? 1 : 0;
    out += kpi("probes that failed", fmt::format("{} / {}", failing, run.probes.size()), "the Timelines show when");
  }
  if (run.comparison) out += kpi("against baseline", std::string(to_string(run.comparison->verdict)), run.comparison->baseline_run);
  out += "</div>\n";

  if (!failed.empty()) out += fmt::format("<h3>Failed checks</h3>\n{}", checks_table(run, failed));
  for (const auto& f : run.faults)
    if (!f.error.empty())
      out += fmt::format("<p>{} fault <code>{}</code> ({}): {}</p>\n", badge("error"), escape(f.name), escape(f.type),
                         escape(f.error));
  if (!all.empty())
    out += fmt::format("<details><summary>All {} checks</summary>\n{}</details>\n",
                       all.size(), checks_table(run, all));
  else
    out += "<p class=\"empty\">The scenario declares no checks.</p>\n";
  return out;
}

std::string faults_html(const RunResult& run) {
  if (run.faults.empty()) return "<p class=\"note\">No faults were injected in this run.</p>\n";
  std::string out = combined_without_series(run)
                        ? "<p class=\"note\">The first run's faults; each run's own report has its times.</p>\n"
                        : "<p class=\"note\">Shaded boxes in the charts are the fault windows, from applied to reverted; "
                          "hover a line for its values; a selector switches between label sets.</p>\n";
  out += "<div class=\"scroll\"><table class=\"data\"><thead><tr><th>fault</th><th>type</th><th>targets</th>"
         "<th class=\"num\">applied</th><th class=\"num\">reverted</th><th>backend</th>"
         "<th class=\"num\">apply latency</th><th>measured effect</th></tr></thead><tbody>\n";
  const auto swatches = fault_swatches(run);
  for (std::size_t i = 0; i < run.faults.size(); ++i) {
    const auto& f = run.faults[i];
    std::string effect;
    for (const auto& [k, v] : f.effect) effect += fmt::format("{}{}={:.4g}", effect.empty() ? "" : " ", k, v);
    out += fmt::format(
        "<tr><td class=\"first\">{}</td><td><code>{}</code></td><td>{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"lbl effect\">{}{}</td></tr>\n",
        fault_name_html(f, swatches[i]), escape(f.type),
        escape(targets_text(f)), f.applied_at_s ? fmt::format("{:.2f} s", *f.applied_at_s) : "not applied",
        f.reverted_at_s ? fmt::format("{:.2f} s", *f.reverted_at_s) : (f.reversible ? "-" : "irreversible"),
        escape(f.backend), f.apply_latency_us ? escape(format_unit(*f.apply_latency_us, "us")) : "-", escape(effect),
        f.error.empty() ? "" : fmt::format(" {} {}", badge("error"), escape(f.error)));
  }
  return out + "</tbody></table></div>\n";
}

std::string recovery_html(const RunResult& run) {
  std::string kpis;
  bool breakdown = false;
  for (const auto& m : run.metrics) {
    if (!m.name.starts_with("resilience/") || per_fault_record(m.name, m.labels)) continue;  // the per-fault table's
    std::string phase = label(m.labels, "phase");
    if (m.name == "resilience/badput") {
      breakdown = breakdown || phase == "overall";
      continue;
    }
    breakdown = breakdown || (m.name == "resilience/goodput" && phase == "overall");
    std::string detail = labels_text(m.labels, "phase");
    if (phase != "overall") detail = phase + (detail.empty() ? "" : ", " + detail);
    kpis += kpi(m.name.substr(std::string("resilience/").size()), format_unit(m.value, m.unit), detail);
  }
  std::string out;
  if (!kpis.empty()) out += "<div class=\"kpis\">" + kpis + "</div>\n";
  if (breakdown)
    out += "<h3>Where the wall time went</h3>\n<p class=\"note\">Goodput is productive training time; badput buckets "
           "are the rest (startup, checkpoint save and restore, wasted progress, recovery, stalls).</p>\n"
           "<div id=\"badput-chart\"></div>\n";
  std::string ckpt = phase_table_html(run, "ckpt/");
  if (ckpt.find("<table") != std::string::npos) out += "<h3>Checkpoints by phase</h3>\n" + ckpt;

  std::vector<const EventRecord*> events;
  for (const auto& e : run.events) events.push_back(&e);
  if (!events.empty()) {
    out += "<h3>Events</h3>\n<div class=\"scroll\"><table class=\"data\"><thead><tr><th class=\"num\">time</th>"
           "<th>from</th><th>event</th><th>details</th></tr></thead><tbody>\n";
    for (std::size_t i = 0; i < events.size() && i < kMaxEvents; ++i) {
      const auto& e = *events[i];
      out += fmt::format("<tr><td class=\"num\">{:.2f} s</td><td>{}</td><td><code>{}</code></td>"
                         "<td class=\"lbl\">{}</td></tr>\n",
                         e.t, e.rank < 0 ? std::string("harness") : fmt::format("rank {}", e.rank), escape(e.name),
                         escape(fields_text(e.fields)));
    }
    out += "</tbody></table></div>\n";
    if (events.size() > kMaxEvents)
      out += fmt::format("<p class=\"note\">... and {} more events in results.json.</p>\n", events.size() - kMaxEvents);
  }
  if (out.empty()) out = "<p class=\"empty\">This run has no resilience or checkpoint metrics.</p>\n";
  if (combined_without_series(run)) out += per_run_note(run, "events");
  return out;
}

std::string advice_html(const RunResult& run) {
  auto advice = tuning_advice(run);
  if (advice.empty())
    return "<p class=\"empty\">No tuning rule fired: nothing in this run's metrics crossed a rule's threshold.</p>\n";
  std::string out;
  for (const auto& a : advice)
    out += fmt::format("<div class=\"advice {}\"><h3>{} {}</h3><div class=\"ev\">{}</div><div>{}</div></div>\n",
                       escape(a.severity), badge(a.severity), escape(a.title), escape(a.evidence),
                       escape(a.recommendation));
  return out;
}

std::string environment_html(const RunResult& run) {
  const auto& env = run.environment;
  std::string out = "<dl class=\"env\">\n";
  auto row = [&](const std::string& k, const std::string& v) {
    out += fmt::format("<dt>{}</dt><dd>{}</dd>\n", escape(k), v.empty() ? "-" : escape(v));
  };
  row("host", env.host);
  row("kernel", env.kernel);
  row("cpus", std::to_string(env.cpus));
  row("cluster", env.cluster);
  row("tool", run.tool_name + " " + run.tool_version);
  row("run id", run.run_id);
  row("seed", std::to_string(run.seed));
  row("started at", run.started_at);
  row("duration", fmt::format("{:.2f} s", run.duration_s));
  row("metrics protocol", fmt::format("{} samples, {} events, {} malformed", run.protocol.samples,
                                      run.protocol.events, run.protocol.malformed));
  std::string backends;
  for (const auto& [k, v] : env.backends) backends += fmt::format("{}{}: {}", backends.empty() ? "" : "; ", k, v);
  row("backends", backends);
  if (env.blas) {
    const auto& b = *env.blas;
    if (b.candidates.empty())  // the user's kernel, not probed
      row("BLAS kernel", fmt::format("{} ({}): {}", b.chosen, b.source, b.reason));
    else
      row("BLAS kernel", fmt::format("{} ({:.1f} GFLOP/s single-thread SGEMM; {}): {}; the library's own choice: {} "
                                     "({:.1f} GFLOP/s); {}",
                                     b.chosen.empty() ? "the library's own" : b.chosen, b.chosen_gflops, b.source,
                                     b.reason, b.detected.empty() ? "?" : b.detected, b.detected_gflops, b.library));
    if (b.cpu.known)
      row("CPU peak (train/mfu_hw)",
          fmt::format("{} lanes x 2 x {} FMA unit{} x {:.2f} GHz (measured) = {:.1f} GFLOP/s per core (fp32, {})", b.cpu.lanes,
                      std::max(b.cpu.fma_units, 1), b.cpu.fma_units == 1 ? "" : "s", b.cpu.clock_ghz, b.cpu.peak_gflops,
                      b.cpu.isa));
  }
  out += "</dl>\n";
  for (const auto& m : run.protocol.malformed_examples) out += fmt::format("<p class=\"note\">malformed: {}</p>\n", escape(m));
  if (!run.processes.empty()) {
    out += fmt::format("<details><summary>{} processes</summary>\n<div class=\"scroll\"><table class=\"data\"><thead>"
                       "<tr><th>role</th><th>rank</th><th>life</th><th>node</th><th>pid</th><th class=\"num\">started"
                       "</th><th class=\"num\">ended</th><th>end</th></tr></thead><tbody>\n",
                       run.processes.size());
    for (const auto& p : run.processes) {
      std::string end = p.exit_code ? fmt::format("exit {}", *p.exit_code)
                        : p.signal  ? fmt::format("signal {}", *p.signal)
                                    : "-";
      if (p.ended_by_fault) end += " (by a fault)";
      out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{:.2f} s</td>"
                         "<td class=\"num\">{}</td><td>{}</td></tr>\n",
                         escape(p.role), p.rank, p.restart, escape(p.node), p.pid, p.started_at_s,
                         p.ended_at_s ? fmt::format("{:.2f} s", *p.ended_at_s) : "-", escape(end));
    }
    out += "</tbody></table></div></details>\n";
  }
  return out;
}

std::string scenario_text(const RunResult& run) {
  if (run.scenario_json.empty()) return "(not recorded)";
  auto doc = nlohmann::json::parse(run.scenario_json, nullptr, false);
  if (doc.is_discarded()) return run.scenario_json;
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace chaosbench::reports::html

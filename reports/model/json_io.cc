#include "reports/model/json_io.h"

#include "reports/model/blas_json.h"
#include "reports/model/schedule_json.h"

#include "common/json/json_limits.h"
#include "common/json/json_values.h"


#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace chaosbench::reports {
namespace {

using nlohmann::ordered_json;
using json = ordered_json;
using common::json_finite;
using common::labels_to_json;

json stats_json(const Stats& s) {
  return json{{"n", s.n},         {"mean", json_finite(s.mean)}, {"stddev", json_finite(s.stddev)},
              {"min", json_finite(s.min)}, {"p50", json_finite(s.p50)},   {"p90", json_finite(s.p90)},
              {"p99", json_finite(s.p99)}, {"max", json_finite(s.max)},   {"sum", json_finite(s.sum)}};
}

}  // namespace

namespace {

constexpr const char* kSeriesMarker = "\x01series\x01";

// "[1.5,2,null]": shortest round-trip numbers, as nlohmann writes them; NaN as null.
void append_numbers(std::string& out, const std::vector<double>& values) {
  out += '[';
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) out += ',';
    if (std::isfinite(values[i])) fmt::format_to(std::back_inserter(out), "{}", values[i]);
    else out += "null";
  }
  out += ']';
}

std::string series_text(const std::vector<Series>& series, int indent) {
  const std::string pad(static_cast<std::size_t>(std::max(indent, 0)) * 2, ' ');
  const char* nl = indent >= 0 ? "\n" : "";
  std::string out = "[";
  for (std::size_t i = 0; i < series.size(); ++i) {
    const auto& s = series[i];
    out += i ? "," : "";
    out += nl;
    out += pad;
    json head = {{"name", s.name}, {"unit", s.unit}, {"labels", labels_to_json(s.labels)}};
    std::string h = head.dump(-1, ' ', false, json::error_handler_t::replace);
    h.pop_back();  // the closing brace: t and v follow
    out += h;
    out += ",\"t\":";
    append_numbers(out, s.t);
    out += ",\"v\":";
    append_numbers(out, s.v);
    out += '}';
  }
  if (!series.empty()) {
    out += nl;
    out += pad.substr(0, pad.size() / 2);
  }
  out += ']';
  return out;
}

json environment_json(const Environment& env) {
  json backends = json::object();
  for (const auto& [k, v] : env.backends) backends[k] = v;
  json e = {{"host", env.host},
            {"kernel", env.kernel},
            {"cpus", env.cpus},
            {"testbed", env.testbed},
            {"cpu_model", env.cpu_model},
            {"cpu_flags", env.cpu_flags},
            {"memory_bytes", env.memory_bytes},
            {"gpus", env.gpus},
            {"compiler", env.compiler},
            {"git_commit", env.git_commit},
            {"scenario_hash", env.scenario_hash},
            {"cluster", env.cluster},
            {"backends", backends}};
  if (env.blas) e["blas"] = blas_json(*env.blas);
  if (!env.hosts.empty()) {
    json hosts = json::array();
    for (const auto& h : env.hosts)
      hosts.push_back({{"name", h.name}, {"address", h.address}, {"hostname", h.hostname}, {"interface", h.interface},
                       {"clock_offset_ms", h.clock_offset_ms}, {"clock_uncertainty_ms", h.clock_uncertainty_ms}});
    e["hosts"] = hosts;
  }
  return e;
}

json faults_json(const std::vector<FaultRecord>& faults) {
  json out = json::array();
  for (const auto& f : faults) {
    out.push_back({{"name", f.name},
                   {"type", f.type},
                   {"targets", f.targets},
                   {"occurrence", f.occurrence},
                   {"applied_at_s", json_finite(f.applied_at_s)},
                   {"reverted_at_s", json_finite(f.reverted_at_s)},
                   {"backend", f.backend},
                   {"apply_latency_us", json_finite(f.apply_latency_us)},
                   {"effect", f.effect},
                   {"reversible", f.reversible},
                   {"error", f.error}});
  }
  return out;
}

json numbers_json(const std::vector<double>& values) {
  json out = json::array();
  for (double v : values) out.push_back(json_finite(v));
  return out;
}

// Absent p50/p99 arrays: a derived single number has only values.
json run_values_json(const RunValues& r) {
  json out = {{"value", numbers_json(r.value)}};
  if (!r.p50.empty()) out["p50"] = numbers_json(r.p50);
  if (!r.p99.empty()) out["p99"] = numbers_json(r.p99);
  return out;
}

json repeat_json(const RepeatRecord& r) {
  json runs = json::array();
  for (const auto& x : r.runs)
    runs.push_back({{"run_id", x.run_id}, {"dir", x.dir}, {"verdict", to_string(x.verdict)}, {"reason", x.reason},
                    {"started_at", x.started_at}, {"duration_s", json_finite(x.duration_s)}});
  return {{"count", r.count}, {"interleaved", r.interleaved}, {"runs", std::move(runs)}};
}

json metrics_json(const std::vector<MetricRecord>& metrics) {
  json out = json::array();
  for (const auto& m : metrics) {
    json rec = {{"name", m.name}, {"unit", m.unit}, {"better", common::to_string(m.better)},
                {"labels", labels_to_json(m.labels)}, {"value", json_finite(m.value)}};
    if (m.stats) rec["stats"] = stats_json(*m.stats);
    if (m.runs) rec["runs"] = run_values_json(*m.runs);
    out.push_back(std::move(rec));
  }
  return out;
}

json checks_json(const std::vector<CheckResult>& checks) {
  json out = json::array();
  for (const auto& c : checks) {
    out.push_back({{"metric", c.metric}, {"labels", labels_to_json(c.labels)}, {"op", c.op},
                   {"threshold", json_finite(c.threshold)}, {"value", json_finite(c.value)},
                   {"status", to_string(c.status)}, {"message", c.message}});
  }
  return out;
}

json processes_json(const std::vector<ProcessRecord>& processes) {
  json out = json::array();
  for (const auto& p : processes) {
    out.push_back({{"role", p.role}, {"rank", p.rank}, {"restart", p.restart}, {"node", p.node}, {"pid", p.pid},
                   {"ended_by_fault", p.ended_by_fault},
                   {"exit_code", p.exit_code ? json(*p.exit_code) : json(nullptr)},
                   {"signal", p.signal ? json(*p.signal) : json(nullptr)},
                   {"started_at_s", json_finite(p.started_at_s)},
                   {"ended_at_s", json_finite(p.ended_at_s)},
                   {"stdout", p.stdout_log}, {"stderr", p.stderr_log}});
    if (!p.host.empty()) out.back()["host"] = p.host;  // only multi-host runs have one
  }
  return out;
}

// Each probe with its track; a transition's value is null when the probe judged no number.
json probes_json(const std::vector<ProbeRecord>& probes) {
  json out = json::array();
  for (const auto& p : probes) {
    json transitions = json::array();
    for (const auto& t : p.transitions)
    {
      json j = {{"t", json_finite(t.t)}, {"ok", t.ok}, {"value", json_finite(t.value)}, {"evidence", t.evidence}};
      if (!t.active) j["active"] = false;
      transitions.push_back(std::move(j));
    }
    out.push_back({{"name", p.name}, {"kind", p.kind}, {"mode", p.mode}, {"evaluations", p.evaluations},
                   {"failures", p.failures}, {"transitions", std::move(transitions)}});
  }
  return out;
}

json abort_json(const AbortRecord& a) {
  return {{"cause", a.cause}, {"evidence", a.evidence}, {"decided_s", json_finite(a.decided_s)},
          {"reverted_s", json_finite(a.reverted_s)}};
}

json comparison_json(const Comparison& c) {
  json rows = json::array();
  for (const auto& m : c.metrics)
    rows.push_back({{"name", m.name}, {"unit", m.unit}, {"better", common::to_string(m.better)}, {"labels", labels_to_json(m.labels)},
                    {"stat", m.stat}, {"basis", m.basis}, {"n_baseline", m.n_baseline}, {"n_current", m.n_current},
                    {"baseline", json_finite(m.baseline)}, {"current", json_finite(m.current)}, {"change", json_finite(m.change)},
                    {"ci_low", json_finite(m.ci_low)}, {"ci_high", json_finite(m.ci_high)},
                    {"p_value", json_finite(m.p_value)}, {"tolerance", json_finite(m.tolerance)},
                    {"status", to_string(m.status)}, {"reason", m.reason},
                    {"baseline_points", numbers_json(m.baseline_points)},
                    {"current_points", numbers_json(m.current_points)}});
  return {{"baseline_run", c.baseline_run}, {"baseline_started_at", c.baseline_started_at},
          {"alpha", json_finite(c.alpha)}, {"verdict", to_string(c.verdict)}, {"metrics", rows}};
}

}  // namespace

std::string to_json(const RunResult& run, int indent) {
  json j;
  j["schema_version"] = run.schema_version;
  j["tool"] = {{"name", run.tool_name}, {"version", run.tool_version}};
  json scenario = common::parse_json_bounded<json>(run.scenario_json.empty() ? "{}" : run.scenario_json);
  j["scenario"] = scenario.is_discarded() ? json::object() : scenario;
  j["environment"] = environment_json(run.environment);
  j["run_id"] = run.run_id;
  j["seed"] = run.seed;
  j["started_at"] = run.started_at;
  j["duration_s"] = json_finite(run.duration_s);
  j["verdict"] = to_string(run.verdict);
  j["reason"] = run.reason;
  json phases = json::array();
  for (const auto& p : run.phases)
    phases.push_back({{"name", p.name}, {"start_s", json_finite(p.start_s)}, {"end_s", json_finite(p.end_s)}});
  j["phases"] = phases;
  j["faults"] = faults_json(run.faults);
  j["schedule"] = schedule_to_json(run.schedule);
  j["metrics"] = metrics_json(run.metrics);
  // Series are most of the file (10^6 numbers for a long run): written by hand below, one
  // line per array, in place of this marker.
  j["series"] = kSeriesMarker;
  j["checks"] = checks_json(run.checks);
  j["processes"] = processes_json(run.processes);
  json events = json::array();
  for (const auto& e : run.events)
    events.push_back({{"t", json_finite(e.t)}, {"rank", e.rank}, {"name", e.name}, {"fields", labels_to_json(e.fields)}});
  j["events"] = events;
  j["probes"] = probes_json(run.probes);
  if (run.abort) j["abort"] = abort_json(*run.abort);  // absent: the run did not stop itself
  if (run.comparison) j["comparison"] = comparison_json(*run.comparison);
  if (run.repeat) j["repeat"] = repeat_json(*run.repeat);  // absent: a single run
  j["protocol"] = {{"samples", run.protocol.samples},
                   {"events", run.protocol.events},
                   {"malformed", run.protocol.malformed},
                   {"malformed_examples", run.protocol.malformed_examples}};
  std::string text = j.dump(indent, ' ', false, json::error_handler_t::replace);
  const std::string marker = json(kSeriesMarker).dump();
  const auto at = text.find(marker);
  if (at == std::string::npos) return text;  // cannot happen: the marker is a value of ours
  return text.replace(at, marker.size(), series_text(run.series, indent));
}

}  // namespace chaosbench::reports

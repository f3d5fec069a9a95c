#include "reports/json_io.h"

#include "reports/blas_json.h"

#include "common/json_limits.h"
#include "common/safe_files.h"

#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace chaosbench::reports {
namespace {

using nlohmann::ordered_json;
using json = ordered_json;

// JSON has no NaN or infinity: such values are written as null (google/benchmark once
// wrote a bare NaN, which no parser accepts).
json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json labels_json(const Labels& labels) {
  json out = json::object();
  for (const auto& [k, v] : labels) {
    if (const auto* d = std::get_if<double>(&v)) {
      out[k] = number(*d);
    } else {
      std::visit([&](const auto& x) { out[k] = x; }, v);
    }
  }
  return out;
}

template <class T>
json optional_number(const std::optional<T>& v) {
  return v ? number(static_cast<double>(*v)) : json(nullptr);
}

json stats_json(const Stats& s) {
  return json{{"n", s.n},         {"mean", number(s.mean)}, {"stddev", number(s.stddev)},
              {"min", number(s.min)}, {"p50", number(s.p50)},   {"p90", number(s.p90)},
              {"p99", number(s.p99)}, {"max", number(s.max)},   {"sum", number(s.sum)}};
}

Labels labels_from(const json& j) {
  Labels out;
  if (!j.is_object()) return out;
  for (const auto& [k, v] : j.items()) {
    if (v.is_string()) out[k] = v.get<std::string>();
    else if (v.is_number_integer()) out[k] = v.get<std::int64_t>();
    else if (v.is_number()) out[k] = v.get<double>();
    else if (v.is_null()) out[k] = std::nan("");
  }
  return out;
}

double num(const json& j, const char* key, double dflt = 0) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : dflt;
}

std::optional<double> opt_num(const json& j, const char* key) {
  auto it = j.find(key);
  if (it != j.end() && it->is_number()) return it->get<double>();
  return std::nullopt;
}

std::string str(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

std::string label_to_string(const LabelValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  return fmt::format("{}", std::get<double>(v));
}

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
    json head = {{"name", s.name}, {"unit", s.unit}, {"labels", labels_json(s.labels)}};
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

}  // namespace

std::string to_json(const RunResult& run, int indent) {
  json j;
  j["schema_version"] = run.schema_version;
  j["tool"] = {{"name", run.tool_name}, {"version", run.tool_version}};
  json scenario = json::parse(run.scenario_json.empty() ? "{}" : run.scenario_json, nullptr, false);
  j["scenario"] = scenario.is_discarded() ? json::object() : scenario;
  json backends = json::object();
  for (const auto& [k, v] : run.environment.backends) backends[k] = v;
  j["environment"] = {{"host", run.environment.host},
                      {"kernel", run.environment.kernel},
                      {"cpus", run.environment.cpus},
                      {"cluster", run.environment.cluster},
                      {"backends", backends}};
  if (run.environment.blas) j["environment"]["blas"] = blas_json(*run.environment.blas);
  j["run_id"] = run.run_id;
  j["seed"] = run.seed;
  j["started_at"] = run.started_at;
  j["duration_s"] = number(run.duration_s);
  j["verdict"] = run.verdict;
  j["reason"] = run.reason;
  json phases = json::array();
  for (const auto& p : run.phases)
    phases.push_back({{"name", p.name}, {"start_s", number(p.start_s)}, {"end_s", number(p.end_s)}});
  j["phases"] = phases;
  json faults = json::array();
  for (const auto& f : run.faults) {
    faults.push_back({{"name", f.name},
                      {"type", f.type},
                      {"targets", f.targets},
                      {"occurrence", f.occurrence},
                      {"applied_at_s", optional_number(f.applied_at_s)},
                      {"reverted_at_s", optional_number(f.reverted_at_s)},
                      {"backend", f.backend},
                      {"apply_latency_us", optional_number(f.apply_latency_us)},
                      {"effect", f.effect},
                      {"reversible", f.reversible},
                      {"error", f.error}});
  }
  j["faults"] = faults;
  json metrics = json::array();
  for (const auto& m : run.metrics) {
    json rec = {{"name", m.name}, {"unit", m.unit}, {"better", m.better},
                {"labels", labels_json(m.labels)}, {"value", number(m.value)}};
    if (m.stats) rec["stats"] = stats_json(*m.stats);
    metrics.push_back(std::move(rec));
  }
  j["metrics"] = metrics;
  // Series are most of the file (10^6 numbers for a long run): written by hand below, one
  // line per array, in place of this marker.
  j["series"] = kSeriesMarker;
  json checks = json::array();
  for (const auto& c : run.checks) {
    checks.push_back({{"metric", c.metric}, {"labels", labels_json(c.labels)}, {"op", c.op},
                      {"threshold", number(c.threshold)}, {"value", optional_number(c.value)},
                      {"status", c.status}, {"message", c.message}});
  }
  j["checks"] = checks;
  json procs = json::array();
  for (const auto& p : run.processes) {
    procs.push_back({{"role", p.role}, {"rank", p.rank}, {"restart", p.restart}, {"node", p.node}, {"pid", p.pid},
                     {"ended_by_fault", p.ended_by_fault},
                     {"exit_code", p.exit_code ? json(*p.exit_code) : json(nullptr)},
                     {"signal", p.signal ? json(*p.signal) : json(nullptr)},
                     {"started_at_s", number(p.started_at_s)},
                     {"ended_at_s", optional_number(p.ended_at_s)},
                     {"stdout", p.stdout_log}, {"stderr", p.stderr_log}});
  }
  j["processes"] = procs;
  json events = json::array();
  for (const auto& e : run.events)
    events.push_back({{"t", number(e.t)}, {"rank", e.rank}, {"name", e.name}, {"fields", labels_json(e.fields)}});
  j["events"] = events;
  if (run.comparison) {
    const auto& c = *run.comparison;
    json rows = json::array();
    for (const auto& m : c.metrics)
      rows.push_back({{"name", m.name}, {"unit", m.unit}, {"better", m.better}, {"labels", labels_json(m.labels)},
                      {"stat", m.stat}, {"n_baseline", m.n_baseline}, {"n_current", m.n_current},
                      {"baseline", number(m.baseline)}, {"current", number(m.current)}, {"change", number(m.change)},
                      {"ci_low", optional_number(m.ci_low)}, {"ci_high", optional_number(m.ci_high)},
                      {"p_value", optional_number(m.p_value)}, {"tolerance", number(m.tolerance)},
                      {"status", m.status}, {"reason", m.reason}});
    j["comparison"] = {{"baseline_run", c.baseline_run}, {"baseline_started_at", c.baseline_started_at},
                       {"alpha", number(c.alpha)}, {"verdict", c.verdict}, {"metrics", rows}};
  }
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

RunResult read_results_file(const std::string& path) {
  std::string text;
  if (std::string error = common::read_named_file(path, text, kMaxResultsBytes); !error.empty())
    throw std::runtime_error(error);
  return from_json(text);
}

RunResult from_json(const std::string& text) {
  std::string error;
  json j = common::parse_json_bounded<json>(text, &error);
  if (j.is_discarded()) throw std::runtime_error(error);
  if (!j.is_object()) throw std::runtime_error("not a JSON object");
  if (!j.contains("schema_version") || !j["schema_version"].is_number_integer())
    throw std::runtime_error("no schema_version: not a chaosbench results file");
  RunResult r;
  r.schema_version = j["schema_version"].get<int>();
  if (r.schema_version > kSchemaVersion)
    throw std::runtime_error(fmt::format("schema_version {} is newer than this chaosbench ({})",
                                         r.schema_version, kSchemaVersion));
  if (j.contains("tool")) {
    r.tool_name = str(j["tool"], "name");
    r.tool_version = str(j["tool"], "version");
  }
  if (j.contains("scenario")) {
    r.scenario_json = j["scenario"].dump();
    r.scenario_name = str(j["scenario"], "name");
  }
  if (j.contains("environment")) {
    const auto& e = j["environment"];
    r.environment.host = str(e, "host");
    r.environment.kernel = str(e, "kernel");
    r.environment.cpus = static_cast<int>(num(e, "cpus"));
    r.environment.cluster = str(e, "cluster");
    if (e.contains("backends") && e["backends"].is_object())
      for (const auto& [k, v] : e["backends"].items())
        if (v.is_string()) r.environment.backends[k] = v.get<std::string>();
    if (e.contains("blas") && e["blas"].is_object()) r.environment.blas = blas_from_json(e["blas"]);
  }
  r.run_id = str(j, "run_id");
  r.seed = static_cast<std::uint64_t>(num(j, "seed"));
  r.started_at = str(j, "started_at");
  r.duration_s = num(j, "duration_s");
  r.verdict = str(j, "verdict");
  r.reason = str(j, "reason");
  for (const auto& p : j.value("phases", json::array()))
    r.phases.push_back({str(p, "name"), num(p, "start_s"), num(p, "end_s")});
  for (const auto& f : j.value("faults", json::array())) {
    FaultRecord fr;
    fr.name = str(f, "name");
    fr.type = str(f, "type");
    if (f.contains("targets"))
      for (const auto& t : f["targets"]) if (t.is_string()) fr.targets.push_back(t.get<std::string>());
    fr.occurrence = static_cast<int>(num(f, "occurrence", 1));
    fr.applied_at_s = opt_num(f, "applied_at_s");
    fr.reverted_at_s = opt_num(f, "reverted_at_s");
    fr.backend = str(f, "backend");
    fr.apply_latency_us = opt_num(f, "apply_latency_us");
    if (f.contains("effect") && f["effect"].is_object())
      for (const auto& [k, v] : f["effect"].items())
        if (v.is_number()) fr.effect[k] = v.get<double>();
    fr.reversible = f.value("reversible", true);
    fr.error = str(f, "error");
    r.faults.push_back(std::move(fr));
  }
  for (const auto& m : j.value("metrics", json::array())) {
    MetricRecord mr;
    mr.name = str(m, "name");
    mr.unit = str(m, "unit");
    mr.better = str(m, "better");
    mr.labels = labels_from(m.value("labels", json::object()));
    mr.value = num(m, "value", std::nan(""));
    if (m.contains("stats") && m["stats"].is_object()) {
      const auto& s = m["stats"];
      mr.stats = Stats{static_cast<std::uint64_t>(num(s, "n")), num(s, "mean"), num(s, "stddev"),
                       num(s, "min"), num(s, "p50"), num(s, "p90"), num(s, "p99"),
                       num(s, "max"), num(s, "sum")};
    }
    r.metrics.push_back(std::move(mr));
  }
  for (const auto& s : j.value("series", json::array())) {
    Series se;
    se.name = str(s, "name");
    se.unit = str(s, "unit");
    se.labels = labels_from(s.value("labels", json::object()));
    for (const auto& x : s.value("t", json::array())) se.t.push_back(x.is_number() ? x.get<double>() : std::nan(""));
    for (const auto& x : s.value("v", json::array())) se.v.push_back(x.is_number() ? x.get<double>() : std::nan(""));
    r.series.push_back(std::move(se));
  }
  for (const auto& c : j.value("checks", json::array())) {
    CheckResult cr;
    cr.metric = str(c, "metric");
    cr.labels = labels_from(c.value("labels", json::object()));
    cr.op = str(c, "op");
    cr.threshold = num(c, "threshold");
    cr.value = opt_num(c, "value");
    cr.status = str(c, "status");
    cr.message = str(c, "message");
    r.checks.push_back(std::move(cr));
  }
  for (const auto& p : j.value("processes", json::array())) {
    ProcessRecord pr;
    pr.role = str(p, "role");
    pr.rank = static_cast<int>(num(p, "rank"));
    pr.restart = static_cast<int>(num(p, "restart"));
    pr.ended_by_fault = p.value("ended_by_fault", false);
    pr.node = str(p, "node");
    pr.pid = static_cast<std::int64_t>(num(p, "pid"));
    if (auto v = opt_num(p, "exit_code")) pr.exit_code = static_cast<int>(*v);
    if (auto v = opt_num(p, "signal")) pr.signal = static_cast<int>(*v);
    pr.started_at_s = num(p, "started_at_s");
    pr.ended_at_s = opt_num(p, "ended_at_s");
    pr.stdout_log = str(p, "stdout");
    pr.stderr_log = str(p, "stderr");
    r.processes.push_back(std::move(pr));
  }
  for (const auto& e : j.value("events", json::array())) {
    EventRecord er;
    er.t = num(e, "t");
    er.rank = static_cast<int>(num(e, "rank"));
    er.name = str(e, "name");
    er.fields = labels_from(e.value("fields", json::object()));
    r.events.push_back(std::move(er));
  }
  if (j.contains("comparison") && j["comparison"].is_object()) {
    const auto& c = j["comparison"];
    Comparison cmp;
    cmp.baseline_run = str(c, "baseline_run");
    cmp.baseline_started_at = str(c, "baseline_started_at");
    cmp.alpha = num(c, "alpha");
    cmp.verdict = str(c, "verdict");
    for (const auto& m : c.value("metrics", json::array())) {
      MetricComparison mc;
      mc.name = str(m, "name");
      mc.unit = str(m, "unit");
      mc.better = str(m, "better");
      mc.labels = labels_from(m.value("labels", json::object()));
      mc.stat = str(m, "stat");
      mc.n_baseline = static_cast<std::uint64_t>(num(m, "n_baseline"));
      mc.n_current = static_cast<std::uint64_t>(num(m, "n_current"));
      mc.baseline = num(m, "baseline");
      mc.current = num(m, "current");
      mc.change = num(m, "change");
      mc.ci_low = opt_num(m, "ci_low");
      mc.ci_high = opt_num(m, "ci_high");
      mc.p_value = opt_num(m, "p_value");
      mc.tolerance = num(m, "tolerance");
      mc.status = str(m, "status");
      mc.reason = str(m, "reason");
      cmp.metrics.push_back(std::move(mc));
    }
    r.comparison = std::move(cmp);
  }
  if (j.contains("protocol")) {
    const auto& p = j["protocol"];
    r.protocol.samples = static_cast<std::uint64_t>(num(p, "samples"));
    r.protocol.events = static_cast<std::uint64_t>(num(p, "events"));
    r.protocol.malformed = static_cast<std::uint64_t>(num(p, "malformed"));
    for (const auto& x : p.value("malformed_examples", json::array()))
      if (x.is_string()) r.protocol.malformed_examples.push_back(x.get<std::string>());
  }
  return r;
}

}  // namespace chaosbench::reports

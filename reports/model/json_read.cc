// Reading results.json back into a RunResult (json_io.h): one reader per section. The file
// may come from anywhere, so every field is optional and type-checked, a missing or
// mistyped one reads as empty, and numbers are range-checked before they become integers
// (a double outside an integer's range has no defined conversion).
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "common/json/json_limits.h"
#include "common/json/json_values.h"
#include "common/files/safe_files.h"
#include "reports/model/blas_json.h"
#include "reports/model/json_io.h"
#include "reports/model/schedule_json.h"

namespace chaosbench::reports {
namespace {

using json = nlohmann::ordered_json;
using common::json_integer;
using common::json_number;
using common::json_optional_number;
using common::json_strings;
using common::json_text;

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

// The array at `key`, or an empty one: a mistyped section reads as empty.
const json& array_at(const json& j, const char* key) {
  static const json empty = json::array();
  auto it = j.find(key);
  return it != j.end() && it->is_array() ? *it : empty;
}

Environment read_environment(const json& e) {
  Environment env;
  env.host = json_text(e, "host");
  env.kernel = json_text(e, "kernel");
  env.cpus = json_integer<int>(e, "cpus");
  env.testbed = json_text(e, "testbed");
  env.cpu_model = json_text(e, "cpu_model");
  env.cpu_flags = json_strings(e, "cpu_flags");
  env.memory_bytes = json_integer<std::uint64_t>(e, "memory_bytes");
  env.gpus = json_strings(e, "gpus");
  env.compiler = json_text(e, "compiler");
  env.git_commit = json_text(e, "git_commit");
  env.scenario_hash = json_text(e, "scenario_hash");
  env.cluster = json_text(e, "cluster");
  if (auto it = e.find("backends"); it != e.end() && it->is_object())
    for (const auto& [k, v] : it->items())
      if (v.is_string()) env.backends[k] = v.get<std::string>();
  if (auto it = e.find("blas"); it != e.end() && it->is_object()) env.blas = blas_from_json(*it);
  if (auto it = e.find("hosts"); it != e.end() && it->is_array())
    for (const auto& h : *it) {
      if (!h.is_object()) continue;
      env.hosts.push_back({json_text(h, "name"), json_text(h, "address"), json_text(h, "hostname"), json_text(h, "interface"),
                           json_number(h, "clock_offset_ms"), json_number(h, "clock_uncertainty_ms")});
    }
  return env;
}

FaultRecord read_fault(const json& f) {
  FaultRecord fr;
  fr.name = json_text(f, "name");
  fr.type = json_text(f, "type");
  fr.targets = json_strings(f, "targets");
  fr.occurrence = json_integer<int>(f, "occurrence", 1);
  fr.applied_at_s = json_optional_number(f, "applied_at_s");
  fr.reverted_at_s = json_optional_number(f, "reverted_at_s");
  fr.backend = json_text(f, "backend");
  fr.apply_latency_us = json_optional_number(f, "apply_latency_us");
  if (auto it = f.find("effect"); it != f.end() && it->is_object())
    for (const auto& [k, v] : it->items())
      if (v.is_number()) fr.effect[k] = v.get<double>();
  auto rev = f.find("reversible");
  fr.reversible = rev == f.end() || !rev->is_boolean() || rev->get<bool>();
  fr.error = json_text(f, "error");
  return fr;
}

// Null (a NaN written) and non-numbers read as NaN, keeping each run's position.
std::vector<double> numbers_at(const json& j, const char* key) {
  std::vector<double> out;
  for (const auto& x : array_at(j, key)) out.push_back(x.is_number() ? x.get<double>() : std::nan(""));
  return out;
}

MetricRecord read_metric(const json& m) {
  MetricRecord mr;
  mr.name = json_text(m, "name");
  mr.unit = json_text(m, "unit");
  mr.better = common::parse_better(json_text(m, "better"));
  mr.labels = labels_from(m.value("labels", json::object()));
  mr.value = json_number(m, "value", std::nan(""));
  if (auto it = m.find("stats"); it != m.end() && it->is_object()) {
    const auto& s = *it;
    mr.stats = Stats{json_integer<std::uint64_t>(s, "n"), json_number(s, "mean"), json_number(s, "stddev"), json_number(s, "min"), json_number(s, "p50"),
                     json_number(s, "p90"), json_number(s, "p99"), json_number(s, "max"), json_number(s, "sum")};
  }
  if (auto it = m.find("runs"); it != m.end() && it->is_object())
    mr.runs = RunValues{numbers_at(*it, "value"), numbers_at(*it, "p50"), numbers_at(*it, "p99")};
  return mr;
}

Series read_series(const json& s) {
  Series se;
  se.name = json_text(s, "name");
  se.unit = json_text(s, "unit");
  se.labels = labels_from(s.value("labels", json::object()));
  se.t = numbers_at(s, "t");
  se.v = numbers_at(s, "v");
  return se;
}

CheckResult read_check(const json& c) {
  CheckResult cr;
  cr.metric = json_text(c, "metric");
  cr.labels = labels_from(c.value("labels", json::object()));
  cr.op = json_text(c, "op");
  cr.threshold = json_number(c, "threshold");
  cr.value = json_optional_number(c, "value");
  cr.status = parse_check_status(json_text(c, "status"));
  cr.message = json_text(c, "message");
  return cr;
}

ProcessRecord read_process(const json& p) {
  ProcessRecord pr;
  pr.role = json_text(p, "role");
  pr.rank = json_integer<int>(p, "rank");
  pr.restart = json_integer<int>(p, "restart");
  auto ended = p.find("ended_by_fault");
  pr.ended_by_fault = ended != p.end() && ended->is_boolean() && ended->get<bool>();
  pr.node = json_text(p, "node");
  pr.host = json_text(p, "host");
  pr.pid = json_integer<std::int64_t>(p, "pid");
  if (json_optional_number(p, "exit_code")) pr.exit_code = json_integer<int>(p, "exit_code");
  if (json_optional_number(p, "signal")) pr.signal = json_integer<int>(p, "signal");
  pr.started_at_s = json_number(p, "started_at_s");
  pr.ended_at_s = json_optional_number(p, "ended_at_s");
  pr.stdout_log = json_text(p, "stdout");
  pr.stderr_log = json_text(p, "stderr");
  return pr;
}

MetricComparison read_metric_comparison(const json& m) {
  MetricComparison mc;
  mc.name = json_text(m, "name");
  mc.unit = json_text(m, "unit");
  mc.better = common::parse_better(json_text(m, "better"));
  mc.labels = labels_from(m.value("labels", json::object()));
  mc.stat = json_text(m, "stat");
  mc.basis = m.contains("basis") ? json_text(m, "basis") : "samples";  // files from before repeated runs
  mc.n_baseline = json_integer<std::uint64_t>(m, "n_baseline");
  mc.n_current = json_integer<std::uint64_t>(m, "n_current");
  mc.baseline = json_number(m, "baseline");
  mc.current = json_number(m, "current");
  mc.change = json_number(m, "change");
  mc.ci_low = json_optional_number(m, "ci_low");
  mc.ci_high = json_optional_number(m, "ci_high");
  mc.p_value = json_optional_number(m, "p_value");
  mc.tolerance = json_number(m, "tolerance");
  mc.status = parse_gate_status(json_text(m, "status"));
  mc.reason = json_text(m, "reason");
  mc.baseline_points = numbers_at(m, "baseline_points");
  mc.current_points = numbers_at(m, "current_points");
  return mc;
}

Comparison read_comparison(const json& c) {
  Comparison cmp;
  cmp.baseline_run = json_text(c, "baseline_run");
  cmp.baseline_started_at = json_text(c, "baseline_started_at");
  cmp.alpha = json_number(c, "alpha");
  cmp.verdict = parse_gate_status(json_text(c, "verdict"));
  for (const auto& m : array_at(c, "metrics")) cmp.metrics.push_back(read_metric_comparison(m));
  return cmp;
}

ProbeRecord read_probe(const json& p) {
  ProbeRecord pr;
  pr.name = json_text(p, "name");
  pr.kind = json_text(p, "kind");
  pr.mode = json_text(p, "mode");
  pr.evaluations = json_integer<std::uint64_t>(p, "evaluations");
  pr.failures = json_integer<std::uint64_t>(p, "failures");
  for (const auto& t : array_at(p, "transitions")) {
    auto ok = t.find("ok");
    auto active = t.find("active");  // absent: active (files before it existed, and most transitions)
    ProbeTransition pt;
    pt.t = json_number(t, "t");
    pt.ok = ok == t.end() || !ok->is_boolean() || ok->get<bool>();
    pt.active = active == t.end() || !active->is_boolean() || active->get<bool>();
    pt.value = json_optional_number(t, "value");
    pt.evidence = json_text(t, "evidence");
    pr.transitions.push_back(std::move(pt));
  }
  return pr;
}

AbortRecord read_abort(const json& a) {
  return {json_text(a, "cause"), json_text(a, "evidence"), json_number(a, "decided_s"), json_optional_number(a, "reverted_s")};
}

RepeatRecord read_repeat(const json& j) {
  RepeatRecord r;
  r.count = json_integer<int>(j, "count");
  auto il = j.find("interleaved");
  r.interleaved = il != j.end() && il->is_boolean() && il->get<bool>();
  for (const auto& x : array_at(j, "runs"))
    r.runs.push_back({json_text(x, "run_id"), json_text(x, "dir"), parse_verdict(json_text(x, "verdict")), json_text(x, "reason"),
                      json_text(x, "started_at"), json_number(x, "duration_s")});
  return r;
}

// The sections that are lists of records.
void read_lists(const json& j, RunResult& r) {
  for (const auto& p : array_at(j, "phases")) r.phases.push_back({json_text(p, "name"), json_number(p, "start_s"), json_number(p, "end_s")});
  for (const auto& f : array_at(j, "faults")) r.faults.push_back(read_fault(f));
  if (auto it = j.find("schedule"); it != j.end()) r.schedule = schedule_from_json(*it);
  for (const auto& m : array_at(j, "metrics")) r.metrics.push_back(read_metric(m));
  for (const auto& s : array_at(j, "series")) r.series.push_back(read_series(s));
  for (const auto& c : array_at(j, "checks")) r.checks.push_back(read_check(c));
  for (const auto& p : array_at(j, "processes")) r.processes.push_back(read_process(p));
  for (const auto& e : array_at(j, "events"))
    r.events.push_back({json_number(e, "t"), json_integer<int>(e, "rank"), json_text(e, "name"), labels_from(e.value("fields", json::object()))});
  // Files from before probes existed have neither key: no probes, no abort.
  for (const auto& p : array_at(j, "probes")) r.probes.push_back(read_probe(p));
  if (auto it = j.find("abort"); it != j.end() && it->is_object()) r.abort = read_abort(*it);
}

}  // namespace

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
  r.schema_version = json_integer<int>(j, "schema_version");
  if (r.schema_version > kSchemaVersion)
    throw std::runtime_error(fmt::format("schema_version {} is newer than this chaosbench ({})",
                                         r.schema_version, kSchemaVersion));
  if (auto it = j.find("tool"); it != j.end() && it->is_object()) {
    r.tool_name = json_text(*it, "name");
    r.tool_version = json_text(*it, "version");
  }
  if (auto it = j.find("scenario"); it != j.end()) {
    set_scenario(r, it->dump());
    if (it->is_object()) r.scenario_name = json_text(*it, "name");
  }
  if (auto it = j.find("environment"); it != j.end() && it->is_object()) r.environment = read_environment(*it);
  r.run_id = json_text(j, "run_id");
  r.seed = json_integer<std::uint64_t>(j, "seed");
  r.started_at = json_text(j, "started_at");
  r.duration_s = json_number(j, "duration_s");
  r.verdict = parse_verdict(json_text(j, "verdict"));
  r.reason = json_text(j, "reason");
  read_lists(j, r);
  if (auto it = j.find("comparison"); it != j.end() && it->is_object()) r.comparison = read_comparison(*it);
  if (auto it = j.find("repeat"); it != j.end() && it->is_object()) r.repeat = read_repeat(*it);
  if (auto it = j.find("protocol"); it != j.end() && it->is_object()) {
    r.protocol.samples = json_integer<std::uint64_t>(*it, "samples");
    r.protocol.events = json_integer<std::uint64_t>(*it, "events");
    r.protocol.malformed = json_integer<std::uint64_t>(*it, "malformed");
    r.protocol.malformed_examples = json_strings(*it, "malformed_examples");
  }
  return r;
}

}  // namespace chaosbench::reports

// Reading results.json back into a RunResult (json_io.h): one reader per section. The file
// may come from anywhere, so every field is optional and type-checked, a missing or
// mistyped one reads as empty, and numbers are range-checked before they become integers
// (a double outside an integer's range has no defined conversion).
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "common/json_limits.h"
#include "common/safe_files.h"
#include "reports/blas_json.h"
#include "reports/json_io.h"
#include "reports/schedule_json.h"

namespace chaosbench::reports {
namespace {

using json = nlohmann::ordered_json;

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

// `v` as an integer of type T, clamped to T's range (NaN reads as 0).
template <class T>
T to_int(double v) {
  if (!(v == v)) return 0;
  constexpr double lo = static_cast<double>(std::numeric_limits<T>::min());
  constexpr double hi = static_cast<double>(std::numeric_limits<T>::max());
  if (v <= lo) return std::numeric_limits<T>::min();
  if (v >= hi) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

template <class T>
T integer(const json& j, const char* key, T dflt = 0) {
  return to_int<T>(num(j, key, static_cast<double>(dflt)));
}

std::vector<std::string> strings(const json& j, const char* key) {
  std::vector<std::string> out;
  auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return out;
  for (const auto& x : *it)
    if (x.is_string()) out.push_back(x.get<std::string>());
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
  env.host = str(e, "host");
  env.kernel = str(e, "kernel");
  env.cpus = integer<int>(e, "cpus");
  env.testbed = str(e, "testbed");
  env.cpu_model = str(e, "cpu_model");
  env.cpu_flags = strings(e, "cpu_flags");
  env.memory_bytes = integer<std::uint64_t>(e, "memory_bytes");
  env.gpus = strings(e, "gpus");
  env.compiler = str(e, "compiler");
  env.git_commit = str(e, "git_commit");
  env.scenario_hash = str(e, "scenario_hash");
  env.cluster = str(e, "cluster");
  if (auto it = e.find("backends"); it != e.end() && it->is_object())
    for (const auto& [k, v] : it->items())
      if (v.is_string()) env.backends[k] = v.get<std::string>();
  if (auto it = e.find("blas"); it != e.end() && it->is_object()) env.blas = blas_from_json(*it);
  if (auto it = e.find("hosts"); it != e.end() && it->is_array())
    for (const auto& h : *it) {
      if (!h.is_object()) continue;
      env.hosts.push_back({str(h, "name"), str(h, "address"), str(h, "hostname"), str(h, "interface"),
                           num(h, "clock_offset_ms"), num(h, "clock_uncertainty_ms")});
    }
  return env;
}

FaultRecord read_fault(const json& f) {
  FaultRecord fr;
  fr.name = str(f, "name");
  fr.type = str(f, "type");
  fr.targets = strings(f, "targets");
  fr.occurrence = integer<int>(f, "occurrence", 1);
  fr.applied_at_s = opt_num(f, "applied_at_s");
  fr.reverted_at_s = opt_num(f, "reverted_at_s");
  fr.backend = str(f, "backend");
  fr.apply_latency_us = opt_num(f, "apply_latency_us");
  if (auto it = f.find("effect"); it != f.end() && it->is_object())
    for (const auto& [k, v] : it->items())
      if (v.is_number()) fr.effect[k] = v.get<double>();
  auto rev = f.find("reversible");
  fr.reversible = rev == f.end() || !rev->is_boolean() || rev->get<bool>();
  fr.error = str(f, "error");
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
  mr.name = str(m, "name");
  mr.unit = str(m, "unit");
  mr.better = str(m, "better");
  mr.labels = labels_from(m.value("labels", json::object()));
  mr.value = num(m, "value", std::nan(""));
  if (auto it = m.find("stats"); it != m.end() && it->is_object()) {
    const auto& s = *it;
    mr.stats = Stats{integer<std::uint64_t>(s, "n"), num(s, "mean"), num(s, "stddev"), num(s, "min"), num(s, "p50"),
                     num(s, "p90"), num(s, "p99"), num(s, "max"), num(s, "sum")};
  }
  if (auto it = m.find("runs"); it != m.end() && it->is_object())
    mr.runs = RunValues{numbers_at(*it, "value"), numbers_at(*it, "p50"), numbers_at(*it, "p99")};
  return mr;
}

Series read_series(const json& s) {
  Series se;
  se.name = str(s, "name");
  se.unit = str(s, "unit");
  se.labels = labels_from(s.value("labels", json::object()));
  se.t = numbers_at(s, "t");
  se.v = numbers_at(s, "v");
  return se;
}

CheckResult read_check(const json& c) {
  CheckResult cr;
  cr.metric = str(c, "metric");
  cr.labels = labels_from(c.value("labels", json::object()));
  cr.op = str(c, "op");
  cr.threshold = num(c, "threshold");
  cr.value = opt_num(c, "value");
  cr.status = parse_check_status(str(c, "status"));
  cr.message = str(c, "message");
  return cr;
}

ProcessRecord read_process(const json& p) {
  ProcessRecord pr;
  pr.role = str(p, "role");
  pr.rank = integer<int>(p, "rank");
  pr.restart = integer<int>(p, "restart");
  auto ended = p.find("ended_by_fault");
  pr.ended_by_fault = ended != p.end() && ended->is_boolean() && ended->get<bool>();
  pr.node = str(p, "node");
  pr.host = str(p, "host");
  pr.pid = integer<std::int64_t>(p, "pid");
  if (auto v = opt_num(p, "exit_code")) pr.exit_code = to_int<int>(*v);
  if (auto v = opt_num(p, "signal")) pr.signal = to_int<int>(*v);
  pr.started_at_s = num(p, "started_at_s");
  pr.ended_at_s = opt_num(p, "ended_at_s");
  pr.stdout_log = str(p, "stdout");
  pr.stderr_log = str(p, "stderr");
  return pr;
}

MetricComparison read_metric_comparison(const json& m) {
  MetricComparison mc;
  mc.name = str(m, "name");
  mc.unit = str(m, "unit");
  mc.better = str(m, "better");
  mc.labels = labels_from(m.value("labels", json::object()));
  mc.stat = str(m, "stat");
  mc.basis = m.contains("basis") ? str(m, "basis") : "samples";  // files from before repeated runs
  mc.n_baseline = integer<std::uint64_t>(m, "n_baseline");
  mc.n_current = integer<std::uint64_t>(m, "n_current");
  mc.baseline = num(m, "baseline");
  mc.current = num(m, "current");
  mc.change = num(m, "change");
  mc.ci_low = opt_num(m, "ci_low");
  mc.ci_high = opt_num(m, "ci_high");
  mc.p_value = opt_num(m, "p_value");
  mc.tolerance = num(m, "tolerance");
  mc.status = parse_gate_status(str(m, "status"));
  mc.reason = str(m, "reason");
  mc.baseline_points = numbers_at(m, "baseline_points");
  mc.current_points = numbers_at(m, "current_points");
  return mc;
}

Comparison read_comparison(const json& c) {
  Comparison cmp;
  cmp.baseline_run = str(c, "baseline_run");
  cmp.baseline_started_at = str(c, "baseline_started_at");
  cmp.alpha = num(c, "alpha");
  cmp.verdict = parse_gate_status(str(c, "verdict"));
  for (const auto& m : array_at(c, "metrics")) cmp.metrics.push_back(read_metric_comparison(m));
  return cmp;
}

ProbeRecord read_probe(const json& p) {
  ProbeRecord pr;
  pr.name = str(p, "name");
  pr.kind = str(p, "kind");
  pr.mode = str(p, "mode");
  pr.evaluations = integer<std::uint64_t>(p, "evaluations");
  pr.failures = integer<std::uint64_t>(p, "failures");
  for (const auto& t : array_at(p, "transitions")) {
    auto ok = t.find("ok");
    auto active = t.find("active");  // absent: active (files before it existed, and most transitions)
    ProbeTransition pt;
    pt.t = num(t, "t");
    pt.ok = ok == t.end() || !ok->is_boolean() || ok->get<bool>();
    pt.active = active == t.end() || !active->is_boolean() || active->get<bool>();
    pt.value = opt_num(t, "value");
    pt.evidence = str(t, "evidence");
    pr.transitions.push_back(std::move(pt));
  }
  return pr;
}

AbortRecord read_abort(const json& a) {
  return {str(a, "cause"), str(a, "evidence"), num(a, "decided_s"), opt_num(a, "reverted_s")};
}

RepeatRecord read_repeat(const json& j) {
  RepeatRecord r;
  r.count = integer<int>(j, "count");
  auto il = j.find("interleaved");
  r.interleaved = il != j.end() && il->is_boolean() && il->get<bool>();
  for (const auto& x : array_at(j, "runs"))
    r.runs.push_back({str(x, "run_id"), str(x, "dir"), parse_verdict(str(x, "verdict")), str(x, "reason"),
                      str(x, "started_at"), num(x, "duration_s")});
  return r;
}

// The sections that are lists of records.
void read_lists(const json& j, RunResult& r) {
  for (const auto& p : array_at(j, "phases")) r.phases.push_back({str(p, "name"), num(p, "start_s"), num(p, "end_s")});
  for (const auto& f : array_at(j, "faults")) r.faults.push_back(read_fault(f));
  if (auto it = j.find("schedule"); it != j.end()) r.schedule = schedule_from_json(*it);
  for (const auto& m : array_at(j, "metrics")) r.metrics.push_back(read_metric(m));
  for (const auto& s : array_at(j, "series")) r.series.push_back(read_series(s));
  for (const auto& c : array_at(j, "checks")) r.checks.push_back(read_check(c));
  for (const auto& p : array_at(j, "processes")) r.processes.push_back(read_process(p));
  for (const auto& e : array_at(j, "events"))
    r.events.push_back({num(e, "t"), integer<int>(e, "rank"), str(e, "name"), labels_from(e.value("fields", json::object()))});
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
  r.schema_version = integer<int>(j, "schema_version");
  if (r.schema_version > kSchemaVersion)
    throw std::runtime_error(fmt::format("schema_version {} is newer than this chaosbench ({})",
                                         r.schema_version, kSchemaVersion));
  if (auto it = j.find("tool"); it != j.end() && it->is_object()) {
    r.tool_name = str(*it, "name");
    r.tool_version = str(*it, "version");
  }
  if (auto it = j.find("scenario"); it != j.end()) {
    set_scenario(r, it->dump());
    if (it->is_object()) r.scenario_name = str(*it, "name");
  }
  if (auto it = j.find("environment"); it != j.end() && it->is_object()) r.environment = read_environment(*it);
  r.run_id = str(j, "run_id");
  r.seed = integer<std::uint64_t>(j, "seed");
  r.started_at = str(j, "started_at");
  r.duration_s = num(j, "duration_s");
  r.verdict = parse_verdict(str(j, "verdict"));
  r.reason = str(j, "reason");
  read_lists(j, r);
  if (auto it = j.find("comparison"); it != j.end() && it->is_object()) r.comparison = read_comparison(*it);
  if (auto it = j.find("repeat"); it != j.end() && it->is_object()) r.repeat = read_repeat(*it);
  if (auto it = j.find("protocol"); it != j.end() && it->is_object()) {
    r.protocol.samples = integer<std::uint64_t>(*it, "samples");
    r.protocol.events = integer<std::uint64_t>(*it, "events");
    r.protocol.malformed = integer<std::uint64_t>(*it, "malformed");
    r.protocol.malformed_examples = strings(*it, "malformed_examples");
  }
  return r;
}

}  // namespace chaosbench::reports

// A run's live state as Prometheus text (live_exposition.h).
#include "harness/prometheus/live_exposition.h"

#include <fmt/format.h>
#include <map>
#include <set>
#include <string_view>

#include "common/metrics/metric_catalogue.h"
#include "harness/exposition/exposition_writer.h"

namespace chaosbench::harness::prometheus {
namespace {

constexpr std::string_view kRunFamilies[] = {
    "chaosbench_run_info",      "chaosbench_run_elapsed_seconds",  "chaosbench_phase",
    "chaosbench_fault_active",  "chaosbench_fault_applied_total",  "chaosbench_fault_errors_total",
    "chaosbench_aborted",       "chaosbench_probe_ok",             "chaosbench_probe_value",
    "chaosbench_probe_failures_total", "chaosbench_samples_received_total", "chaosbench_events_received_total",
    "chaosbench_grafana_annotation_failures_total"};

bool reserved(std::string_view name) {
  for (auto r : kRunFamilies)
    if (r == name) return true;
  return false;
}

void one(ExpositionWriter& w, std::string_view name, std::string_view type, std::string_view help, double v) {
  w.family(name, type, help);
  w.sample(name, {}, v);
}

void write_faults(ExpositionWriter& w, const LiveSnapshot& live) {
  auto labels = [](const LiveFault& f) { return ExpositionLabels{{"name", f.name}, {"type", f.type}, {"target", f.target}}; };
  w.family("chaosbench_fault_active", "gauge",
           "1 while an occurrence of the scenario's fault is in effect, else 0 (target: the scenario's target)");
  for (const auto& f : live.faults) w.sample("chaosbench_fault_active", labels(f), f.active > 0 ? 1 : 0);
  w.family("chaosbench_fault_applied_total", "counter", "Occurrences of the fault applied so far");
  for (const auto& f : live.faults) w.sample("chaosbench_fault_applied_total", labels(f), static_cast<double>(f.applied));
  one(w, "chaosbench_fault_errors_total", "counter", "Fault applies or reverts that failed",
      static_cast<double>(live.fault_errors));
}

void write_probes(ExpositionWriter& w, const LiveSnapshot& live) {
  w.family("chaosbench_probe_ok", "gauge", "1 when the probe's newest result passed, 0 when it failed");
  for (const auto& [name, p] : live.probes)
    if (p.ok) w.sample("chaosbench_probe_ok", {{"probe", name}}, *p.ok ? 1 : 0);
  w.family("chaosbench_probe_value", "gauge", "The value the probe's newest result measured");
  for (const auto& [name, p] : live.probes)
    if (p.value) w.sample("chaosbench_probe_value", {{"probe", name}}, *p.value);
  w.family("chaosbench_probe_failures_total", "counter", "Failed results of the probe so far");
  for (const auto& [name, p] : live.probes)
    w.sample("chaosbench_probe_failures_total", {{"probe", name}}, static_cast<double>(p.failures));
}

void write_run(ExpositionWriter& w, const LiveExpositionInputs& in) {
  const LiveSnapshot& live = in.live;
  w.family("chaosbench_run_info", "gauge", "Always 1; the labels name the run");
  w.sample("chaosbench_run_info", {{"run_id", live.run_id}, {"scenario", live.scenario}}, 1);
  one(w, "chaosbench_run_elapsed_seconds", "gauge", "Seconds since the workload started (since set-up before that)",
      in.elapsed_s);
  w.family("chaosbench_phase", "gauge", "1 for the phase the run is in, 0 for the others");
  const std::string now = live.phase();
  for (const auto& p : live.phases()) w.sample("chaosbench_phase", {{"phase", p}}, p == now ? 1 : 0);
  write_faults(w, live);
  one(w, "chaosbench_aborted", "gauge", "1 once a stop condition or the kill switch stops the run", live.aborted ? 1 : 0);
  write_probes(w, live);
  one(w, "chaosbench_samples_received_total", "counter", "Samples the workload sent", static_cast<double>(in.samples_received));
  one(w, "chaosbench_events_received_total", "counter", "Events the workload sent", static_cast<double>(in.events_received));
  one(w, "chaosbench_grafana_annotation_failures_total", "counter", "Grafana annotation requests that failed",
      static_cast<double>(live.annotation_failures));
}

std::string metric_help(const LatestSample& s) {
  const auto* spec = common::find_metric(s.name);
  const std::string_view unit = spec ? spec->unit : std::string_view(s.unit);
  std::string help = unit.empty() ? s.name : fmt::format("{} ({})", s.name, unit);
  return spec ? fmt::format("{}: {}", help, spec->description) : help + ": sent by the workload";
}

// The series' labels: rank first, then the sample's own, sanitised; a label whose name
// meets one already there (its own "rank", or "a-b" beside "a_b") is left out.
ExpositionLabels metric_labels(const LatestSample& s) {
  ExpositionLabels out{{"rank", std::to_string(s.rank)}};
  std::set<std::string> names{"rank"};
  for (const auto& [k, v] : s.labels) {
    std::string name = label_name(k);
    if (names.insert(name).second) out.emplace_back(std::move(name), bench::label_to_string(v));
  }
  return out;
}

void write_metrics(ExpositionWriter& w, const std::vector<LatestSample>& latest) {
  // Families by Prometheus name; the first metric (by our name) to claim one owns it.
  std::map<std::string, std::vector<const LatestSample*>> families;
  for (const auto& s : latest) {
    std::string name = metric_name(s.name);
    if (reserved(name)) continue;
    auto& members = families[std::move(name)];
    if (members.empty() || members.front()->name == s.name) members.push_back(&s);
  }
  for (const auto& [name, members] : families) {
    w.family(name, "gauge", metric_help(*members.front()));
    std::set<ExpositionLabels> seen;
    for (const auto* s : members) {
      ExpositionLabels labels = metric_labels(*s);
      if (seen.insert(labels).second) w.sample(name, labels, s->value);
    }
  }
}

}  // namespace

std::string render_live_exposition(const LiveExpositionInputs& in) {
  ExpositionWriter w;
  write_run(w, in);
  write_metrics(w, in.latest);
  return w.take();
}

}  // namespace chaosbench::harness::prometheus

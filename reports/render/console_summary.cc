#include "reports/render/console_summary.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>

#include "common/metrics/metric_catalogue.h"
#include "common/values/percentile.h"
#include "reports/diagnosis/diagnoser.h"
#include "reports/diagnosis/diagnosis_output.h"
#include "reports/model/text_format.h"

namespace chaosbench::reports {
namespace {

std::string label(const Labels& labels, const char* key) {
  auto it = labels.find(key);
  return it == labels.end() ? std::string() : label_to_string(it->second);
}

std::string human_bytes(double b) {
  if (b >= 1 << 30) return fmt::format("{:g}GiB", b / (1 << 30));
  if (b >= 1 << 20) return fmt::format("{:g}MiB", b / (1 << 20));
  if (b >= 1 << 10) return fmt::format("{:g}KiB", b / (1 << 10));
  return fmt::format("{:g}B", b);
}

// What each fault window did: per metric, the median over series of value(window) /
// value(baseline) for records with the same labels but the phase, e.g.
// "fault:hung-node   comm/latency x412 (3 series)". Only metrics with a direction.
std::string phase_effects(const RunResult& run) {
  std::map<std::pair<std::string, Labels>, double> baseline;
  for (const auto& m : run.metrics) {
    // The catalogue hides some (algbw says what busbw says; avg_busbw mixes whichever
    // sizes each window saw).
    if (const auto* spec = common::find_metric(m.name); spec && spec->display.effects_hidden) continue;
    if (m.better == common::Better::kNone || label(m.labels, "phase") != "baseline") continue;
    Labels key = m.labels;
    key.erase("phase");
    baseline[{m.name, key}] = m.value;
  }
  std::vector<std::string> phases;
  for (const auto& p : run.phases)
    if (p.name != "baseline" && std::find(phases.begin(), phases.end(), p.name) == phases.end()) phases.push_back(p.name);
  std::string out;
  for (const auto& phase : phases) {
    std::map<std::string, std::vector<double>> ratios;  // metric -> per series
    for (const auto& m : run.metrics) {
      if (label(m.labels, "phase") != phase) continue;
      Labels key = m.labels;
      key.erase("phase");
      auto it = baseline.find({m.name, key});
      if (it == baseline.end() || !(it->second > 0) || !std::isfinite(m.value)) continue;
      ratios[m.name].push_back(m.value / it->second);
    }
    if (ratios.empty()) continue;
    std::string line;
    int shown = 0;
    for (auto& [name, r] : ratios) {
      if (shown++ == 4) break;
      line += fmt::format("{}{} x{:.3g} ({} series)", line.empty() ? "" : ", ", name, common::median(r), r.size());
    }
    if (out.empty()) out = "\n  against the baseline (median ratio over matching series):\n";
    out += fmt::format("  {:<24} {}\n", phase, line);
  }
  return out;
}

// One line per fault occurrence (the first 12): what, where, when, and by which backend.
std::string fault_lines(const RunResult& run) {
  if (run.faults.empty()) return "";
  std::string out = "\n  faults:\n";
  std::size_t shown = 0;
  for (const auto& f : run.faults) {
    if (++shown > 12) {
      out += fmt::format("  ... and {} more (results.json faults)\n", run.faults.size() - 12);
      break;
    }
    std::string when = f.applied_at_s ? fmt::format("{:.2f}s", *f.applied_at_s) : "not applied";
    if (f.reverted_at_s) when += fmt::format(" to {:.2f}s", *f.reverted_at_s);
    std::string targets;
    for (const auto& t : f.targets) targets += (targets.empty() ? "" : ",") + t;
    out += fmt::format("  {:<16} {:<18} {:<14} {:<20} backend {}{}\n", f.occurrence > 1 ? fmt::format("{}#{}", f.name, f.occurrence) : f.name,
                       f.type, targets, when, f.backend.empty() ? "-" : f.backend,
                       f.error.empty() ? "" : "  ERROR: " + f.error);
  }
  return out;
}

// Each probe's tally, with its last evidence when it failed: what the probes saw, beside
// the abort line that says which one stopped the run.
std::string probe_lines(const RunResult& run) {
  if (run.probes.empty()) return "";
  std::string out = "\n  probes:\n";
  for (const auto& p : run.probes) {
    out += fmt::format("  {:<20} {:<8} {:<16} {} of {} evaluations failed", p.name, p.kind, p.mode, p.failures, p.evaluations);
    for (auto t = p.transitions.rbegin(); t != p.transitions.rend(); ++t)
      if (!t->ok) {
        out += fmt::format(" (last at {:.2f}s: {})", t->t, t->evidence);
        break;
      }
    out += "\n";
  }
  return out;
}

}  // namespace

// What the blind diagnosis names (diagnoser.h), for runs that measured for it: the top
// culprits, one line each.
std::string diagnosis_lines(const RunResult& run) {
  const bool measured = std::any_of(run.series.begin(), run.series.end(), [](const Series& s) {
    return s.name == "net/pair_rtt" || s.name == "node/cpu_wait";
  });
  if (!measured) return "";
  const Diagnosis d = diagnose_series(run.series, run.processes);
  if (d.culprits.empty()) return "\n  diagnosis (blind): nothing stands out\n";
  std::string out = "\n  diagnosis (blind, from the measurements alone; chaosbench diagnose results.json):\n";
  for (std::size_t i = 0; i < d.culprits.size() && i < 5; ++i) out += fmt::format("  {}. {}\n", i + 1, culprit_line(d.culprits[i]));
  return out;
}

std::string console_summary(const RunResult& run, const std::string& run_dir) {
  std::string out;
  out += fmt::format("\n{} — {} in {:.1f}s\n", run.scenario_name, verdict_text(run.verdict), run.duration_s);
  if (!run.reason.empty()) out += fmt::format("  {}\n", run.reason);
  if (run.abort) out += fmt::format("  aborted: {}\n", abort_text(*run.abort));
  if (run.repeat) out += fmt::format("  {}\n", repeat_text(*run.repeat));

  // Collectives: busbw per collective/algorithm at each size, overall phase.
  std::map<std::pair<std::string, std::string>, std::vector<const MetricRecord*>> comm;
  for (const auto& m : run.metrics)
    if (m.name == "comm/busbw" && label(m.labels, "phase") == "overall")
      comm[{label(m.labels, "collective"), label(m.labels, "algorithm")}].push_back(&m);
  if (!comm.empty()) {
    out += fmt::format("\n  {:<16} {:<17} {:>9} {:>12} {:>12} {:>12}\n", "collective", "algorithm", "bytes", "latency p50",
                       "algbw", "busbw");
    for (auto& [key, recs] : comm) {
      for (const auto* m : recs) {
        const MetricRecord* lat = nullptr;
        const MetricRecord* alg = nullptr;
        for (const auto& o : run.metrics) {
          if (o.labels != m->labels) continue;
          if (o.name == "comm/latency") lat = &o;
          if (o.name == "comm/algbw") alg = &o;
        }
        double bytes = std::atof(label(m->labels, "bytes").c_str());
        out += fmt::format("  {:<16} {:<17} {:>9} {:>12} {:>12} {:>12}\n", key.first, key.second, human_bytes(bytes),
                           lat && lat->stats ? format_value(lat->stats->p50, "us") : "-",
                           alg ? format_value(alg->value, "GB/s") : "-", format_value(m->value, "GB/s"));
      }
    }
    for (const auto& m : run.metrics)
      if (m.name == "comm/avg_busbw" && label(m.labels, "phase") == "overall")
        out += fmt::format("  avg busbw {} {}: {}\n", label(m.labels, "collective"), label(m.labels, "algorithm"),
                           format_value(m.value, m.unit));
  }
  out += fault_lines(run);
  out += probe_lines(run);
  out += phase_effects(run);
  out += diagnosis_lines(run);
  // Other metrics: the overall value of each (first 20).
  std::size_t shown = 0;
  for (const auto& m : run.metrics) {
    if (m.name.starts_with("comm/") || label(m.labels, "phase") != "overall") continue;
    if (shown++ == 0) out += "\n";
    if (shown > 20) break;
    std::string extra;
    for (const auto& [k, v] : m.labels)
      if (k != "phase") extra += fmt::format(" {}={}", k, label_to_string(v));
    out += fmt::format("  {:<28} {:>14}{}\n", m.name, format_value(m.value, m.unit), extra);
  }
  if (!run.checks.empty()) {
    out += "\n";
    for (const auto& c : run.checks)
      out += fmt::format("  [{}] {} {} {:g}: {}\n", verdict_text(c.status), c.metric, c.op, c.threshold,
                         c.message);
  }
  if (run.protocol.malformed)
    out += fmt::format("\n  {} malformed metric records were ignored (see results.json protocol)\n", run.protocol.malformed);
  out += fmt::format("\nresults: {}/results.json\n", run_dir);
  return out;
}

}  // namespace chaosbench::reports

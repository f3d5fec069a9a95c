// chaosbench compare BASELINE.json CURRENT.json [--gate] — the baseline gate (reports/gate/gate.h,
// docs/gate.md) between two results files, as a table or JSON.
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <vector>

#include "harness/cli/cli_options.h"
#include "harness/core/exit_code.h"
#include "harness/cli/report_output.h"
#include "harness/cli/results_file.h"
#include "harness/cli/text_table.h"
#include "reports/gate/gate.h"
#include "reports/model/judgement.h"
#include "reports/model/json_io.h"
#include "reports/model/text_format.h"

namespace chaosbench::harness {
namespace {

// nullopt (and the reason on stderr, naming the file) when the file cannot be read or is
// not a results file.
std::optional<reports::RunResult> load_results(const std::string& file) { return load_results_file("compare", file); }

// A run that stopped itself measured only up to its abort (its fault phase is cut short):
// the comparison still runs, and stderr says so, naming the file.
void note_abort(const std::string& file, const reports::RunResult& run) {
  if (!run.abort) return;
  std::cerr << fmt::format("chaosbench compare: {}: the run was aborted ({}); its metrics end at the abort\n", file,
                           reports::abort_text(*run.abort));
}

std::string labels_text(const reports::Labels& labels) {
  std::string out;
  for (const auto& [k, v] : labels) {
    if (k == "phase") continue;
    out += fmt::format("{}{}={}", out.empty() ? "" : ",", k, reports::label_to_string(v));
  }
  return out.empty() ? "-" : out;
}

std::string phase_text(const reports::Labels& labels) {
  auto it = labels.find("phase");
  return it == labels.end() ? "overall" : reports::label_to_string(it->second);
}

std::string signed_pct(double x) {
  if (!std::isfinite(x)) return std::isnan(x) ? "-" : (x > 0 ? "+inf%" : "-inf%");
  return fmt::format("{:+.1f}%", x * 100.0);
}

std::string value_text(double v, const std::string& unit) {
  return unit.empty() ? fmt::format("{:.4g}", v) : fmt::format("{:.4g} {}", v, unit);
}

// Rows FAIL first, then WARN, then PASS; the reason under each row that did not pass.
void print_comparison(const reports::Comparison& c, const std::string& baseline_file) {
  TextTable table;
  table.rows.push_back({"status", "metric", "labels", "phase", "stat", "baseline", "current", "change", "CI", "p"});
  table.notes.emplace_back();
  table.left_columns = 5;
  std::array<std::size_t, 3> counts{};
  const std::array<reports::GateStatus, 3> order{reports::GateStatus::kFail, reports::GateStatus::kWarn,
                                                reports::GateStatus::kPass};
  for (std::size_t s = 0; s < order.size(); ++s) {
    for (const auto& m : c.metrics) {
      if (m.status != order[s]) continue;
      ++counts[s];
      table.rows.push_back({reports::verdict_text(m.status), m.name, labels_text(m.labels), phase_text(m.labels),
                            m.stat, value_text(m.baseline, m.unit), value_text(m.current, m.unit),
                            signed_pct(m.change),
                            m.ci_low ? signed_pct(*m.ci_low) + ".." + signed_pct(*m.ci_high) : "-",
                            m.p_value ? fmt::format("{:.2g}", *m.p_value) : "-"});
      table.notes.push_back(m.status != reports::GateStatus::kPass ? m.reason : "");
    }
  }
  print_table(table, std::cout);
  std::string against =
      c.baseline_run == baseline_file ? baseline_file : fmt::format("{} ({})", c.baseline_run, baseline_file);
  std::cout << fmt::format("\nverdict: {} ({} fail, {} warn, {} pass; alpha {:g}) against {}\n", reports::verdict_text(c.verdict),
                           counts[0], counts[1], counts[2], c.alpha, against);
}

}  // namespace

int cmd_compare(const Args& args) {
  po::options_description options("Options");
  options.add_options()
      ("files", po::value<std::vector<std::string>>()->multitoken(), "BASELINE.json CURRENT.json")
      ("gate", "exit 1 when a metric regressed significantly beyond its tolerance")
      ("alpha", po::value<double>()->default_value(0.01), "significance level of the tests; the CI is 1 - alpha")
      ("tolerance", po::value<std::string>(), "default tolerance in percent (5 or 5%); the scenario's checks may set one per metric")
      ("allow-env-diff", "compare runs from different testbeds or hardware (else exit 2)")
      ("json", "print the comparison as JSON instead of a table");
  po::positional_options_description positional;
  positional.add("files", -1);
  auto cl = parse_command_line(args, options, positional);
  if (cl.help) {
    print_help("chaosbench compare BASELINE.json CURRENT.json [--gate] [--alpha A] [--tolerance PCT] [--json]\n"
               "                          [--allow-env-diff]",
               "Compares every metric of CURRENT with the same metric (name, labels, phase) of BASELINE:\n"
               "the relative change of the median (and of the p99 for latencies) with a bootstrap\n"
               "confidence interval and a two-sided Mann-Whitney U test on the samples behind it.\n"
               "A metric FAILs only when the change is significant (p < alpha) and the whole interval\n"
               "lies beyond the tolerance in the worse direction; too few samples give WARN.\n"
               "docs/gate.md explains the method.\n"
               "Runs from different testbeds (CHAOSBENCH_TESTBED) or hardware are refused (exit 2, naming\n"
               "what differs) unless --allow-env-diff.\n"
               "Exit 1 with --gate when a metric failed, 2 on a usage error or an unreadable file, else 0.",
               options);
    return kExitPass;
  }
  std::vector<std::string> files;
  if (cl.vm.count("files")) files = cl.vm["files"].as<std::vector<std::string>>();
  if (files.size() != 2) throw UsageError("expected two results files: BASELINE.json CURRENT.json");
  reports::GateOptions gate;
  gate.alpha = cl.vm["alpha"].as<double>();
  if (!(gate.alpha > 0 && gate.alpha < 1)) throw UsageError("--alpha must lie between 0 and 1");
  if (cl.vm.count("tolerance")) gate.default_tolerance = parse_tolerance(cl.vm["tolerance"].as<std::string>());

  auto baseline = load_results(files[0]);
  auto current = load_results(files[1]);
  if (!baseline || !current) return kExitUsage;
  note_abort(files[0], *baseline);
  note_abort(files[1], *current);
  ReportOptions env_check;
  env_check.baseline = *baseline;
  env_check.allow_env_diff = cl.vm.count("allow-env-diff") > 0;
  check_baseline_environment(env_check, current->environment);
  reports::RunResult holder;
  holder.comparison = reports::compare_runs(*baseline, *current, gate);
  if (holder.comparison->baseline_run.empty()) holder.comparison->baseline_run = files[0];
  const auto& comparison = *holder.comparison;

  if (cl.vm.count("json")) {
    // The comparison exactly as results.json writes it (its "comparison" object).
    auto doc = nlohmann::ordered_json::parse(reports::to_json(holder));
    std::cout << doc["comparison"].dump(2) << "\n";
  } else {
    print_comparison(comparison, files[0]);
  }
  return exit_code_for(cl.vm.count("gate") ? reports::judge_gate(comparison).verdict : reports::Verdict::kPass);
}

}  // namespace chaosbench::harness

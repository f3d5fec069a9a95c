// chaosbench history gate DIR RESULTS.json — a run against the last runs of its testbed ×
// scenario (reports/history/history_gate.h, docs/history.md), as a table, JSON, and a Markdown
// trend table appended to a file.
#include <array>
#include <cmath>
#include <fmt/format.h>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "harness/cli/cli_options.h"
#include "harness/cli/cmd_history.h"
#include "harness/cli/environment_check.h"
#include "harness/core/exit_code.h"
#include "harness/cli/text_table.h"
#include "reports/gate/gate_selection.h"
#include "reports/history/history_file.h"
#include "reports/history/history_gate.h"
#include "reports/history/history_json.h"
#include "reports/history/history_store.h"
#include "reports/history/history_summary.h"
#include "reports/model/text_format.h"

namespace chaosbench::harness {
namespace {

std::string change_text(double x) {
  if (std::isnan(x)) return "-";
  if (std::isinf(x)) return x > 0 ? "+inf%" : "-inf%";
  return reports::format_change(x);
}

// Rows FAIL first, then WARN, then PASS, the reason under each that did not pass; then
// the verdict.
void print_gate(const reports::HistoryGateResult& result, const reports::HistoryPlace& place) {
  TextTable table;
  table.rows.push_back({"status", "metric", "labels", "phase", "stat", "runs", "mean", "interval", "current", "change",
                        "steps"});
  table.notes.emplace_back();
  table.left_columns = 5;
  std::array<std::size_t, 3> counts{};
  const std::array order{reports::GateStatus::kFail, reports::GateStatus::kWarn, reports::GateStatus::kPass};
  for (std::size_t s = 0; s < order.size(); ++s)
    for (const auto& r : result.rows) {
      if (r.status != order[s]) continue;
      ++counts[s];
      const auto& pi = r.interval;
      const auto& key = r.key;
      const std::string labels = reports::format_labels(key.labels, false);
      table.rows.push_back({reports::verdict_text(r.status), key.name, labels.empty() ? "-" : labels,
                            reports::phase_of(key.labels), key.stat, std::to_string(r.values.size()),
                            pi ? reports::format_value(pi->center, key.unit) : "-",
                            pi ? reports::format_value(pi->low, "") + ".." + reports::format_value(pi->high, key.unit)
                               : "-",
                            reports::format_value(r.current, key.unit), change_text(r.change),
                            std::to_string(r.steps.size())});
      table.notes.push_back(r.status != reports::GateStatus::kPass ? r.reason : "");
    }
  print_table(table, std::cout);
  std::cout << fmt::format("\nverdict: {} ({} fail, {} warn, {} pass; alpha {:g}) against {} runs of {} / {}{}\n",
                           reports::verdict_text(result.verdict), counts[0], counts[1], counts[2], result.alpha,
                           result.history_runs, place.testbed, place.scenario,
                           result.newest_run.empty() ? "" : " (newest " + result.newest_run + ")");
}

// With no history here, says so, and names the testbeds that do have this scenario.
void note_missing_history(const std::string& dir, const reports::HistoryPlace& place) {
  std::string others;
  for (const auto& h : reports::list_histories(dir))
    if (h.scenario == place.scenario && h.testbed != place.testbed) others += (others.empty() ? "" : ", ") + h.testbed;
  std::cerr << fmt::format("chaosbench history: no history of {} on testbed {} yet ({}){}\n", place.scenario,
                           place.testbed, place.path,
                           others.empty() ? "" : "; testbeds with one: " + others + " (--testbed picks one)");
}

reports::HistoryGateOptions read_gate_options(const po::variables_map& vm) {
  reports::HistoryGateOptions o;
  o.window = vm["window"].as<std::size_t>();
  o.alpha = vm["alpha"].as<double>();
  o.min_history = vm["min-history"].as<std::size_t>();
  if (vm.count("tolerance")) o.default_tolerance = parse_tolerance(vm["tolerance"].as<std::string>());
  if (!(o.alpha > 0 && o.alpha < 1)) throw UsageError("--alpha must lie between 0 and 1");
  if (o.min_history < 2) throw UsageError("--min-history must be at least 2 (a spread needs two runs)");
  if (o.window < o.min_history) throw UsageError("--window must be at least --min-history");
  return o;
}

}  // namespace

int history_gate(const Args& args) {
  po::options_description options("Options");
  options.add_options()
      ("files", po::value<std::vector<std::string>>()->multitoken(), "DIR RESULTS.json")
      ("window", po::value<std::size_t>()->default_value(30), "the last K runs of the history")
      ("alpha", po::value<double>()->default_value(0.01), "the interval is at 1 - alpha; significance of steps")
      ("tolerance", po::value<std::string>(),
       "default tolerance in percent (5 or 5%); the scenario's checks may set one per metric")
      ("min-history", po::value<std::size_t>()->default_value(5), "fewer history runs give WARN")
      ("testbed", po::value<std::string>(), "gate against this testbed's history (default: the run's own label)")
      ("allow-env-diff", "gate against a history from another testbed or hardware (else exit 2)")
      ("json", "print the result as JSON instead of a table")
      ("summary", po::value<std::string>(), "append a Markdown trend table to FILE ($GITHUB_STEP_SUMMARY)");
  po::positional_options_description positional;
  positional.add("files", -1);
  auto cl = parse_command_line(args, options, positional);
  if (cl.help) {
    print_help("chaosbench history gate DIR RESULTS.json [options]",
               "Gates RESULTS.json against the last K runs of its testbed x scenario in DIR (docs/history.md).\n"
               "Exit 1 when a metric failed, 2 on a usage error, an unreadable file or a history from other\n"
               "hardware, else 0. The store is not changed.",
               options);
    return kExitPass;
  }
  std::vector<std::string> files;
  if (cl.vm.count("files")) files = cl.vm["files"].as<std::vector<std::string>>();
  if (files.size() != 2) throw UsageError("expected DIR RESULTS.json");
  const auto gate_options = read_gate_options(cl.vm);
  auto current = load_history_results(files[1]);
  if (!current) return kExitUsage;
  if (current->verdict != reports::Verdict::kPass && current->verdict != reports::Verdict::kFail)
    std::cerr << fmt::format("chaosbench history: {}: the run's verdict is {}: its metrics may be partial\n", files[1],
                             reports::to_string(current->verdict));
  const std::string testbed =
      cl.vm.count("testbed") ? cl.vm["testbed"].as<std::string>() : current->environment.testbed;
  reports::HistoryPlace place{testbed_label(testbed), current->scenario_name.empty() ? reports::kUnnamedScenario
                                                                                     : current->scenario_name,
                              reports::history_path(files[0], testbed, current->scenario_name)};
  auto history = reports::HistoryFile::open_for_reading(place.path);
  static const std::vector<reports::HistoryEntry> kNone;
  const auto& entries = history ? history->entries() : kNone;
  if (history) print_history_notes(history->notes());
  if (entries.empty()) note_missing_history(files[0], place);
  else
    check_same_environment(entries.back().environment, current->environment,
                           fmt::format("{}: its newest run ({})", place.path, entries.back().run_id),
                           fmt::format("the history's newest run ({})", entries.back().run_id),
                           cl.vm.count("allow-env-diff") > 0);
  const auto result = reports::gate_against_history(entries, *current, gate_options);
  if (cl.vm.count("json")) std::cout << reports::history_gate_json(result, place, current->run_id).dump(2) << "\n";
  else print_gate(result, place);
  int code = exit_code_for(result.verdict == reports::GateStatus::kFail ? reports::Verdict::kFail
                                                                         : reports::Verdict::kPass);
  if (cl.vm.count("summary")) {
    const auto file = cl.vm["summary"].as<std::string>();
    std::ofstream out(file, std::ios::app);
    out << reports::history_summary_markdown(result, place, current->run_id);
    out.flush();
    if (!out) {
      std::cerr << fmt::format("chaosbench history: {}: cannot append the summary\n", file);
      if (code == kExitPass) code = exit_code_for(reports::Verdict::kError, VerdictSource::kHostLimit);
    }
  }
  return code;
}

}  // namespace chaosbench::harness

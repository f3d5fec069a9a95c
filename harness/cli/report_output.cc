#include "harness/cli/report_output.h"

#include "harness/cli/environment_check.h"

#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "harness/core/exit_code.h"
#include "reports/render/console_summary.h"
#include "reports/gate/gate.h"
#include "reports/model/judgement.h"
#include "reports/model/json_io.h"
#include "reports/render/markdown_report.h"

namespace chaosbench::harness {

void add_report_options(po::options_description& options) {
  options.add_options()
      ("report", po::value<std::vector<std::string>>()->composing(),
       "FORMAT[=FILE]: console, json, html, md, junit, trace or bmf (repeatable; default: every file format but bmf)")
      ("baseline", po::value<std::string>(), "results.json of a baseline run: compare and gate (exit 1 on a regression)")
      ("allow-env-diff", "compare with a baseline from another testbed or hardware (else exit 2)")
      ("annotations", "print GitHub ::error:: lines for failed checks");
}

ReportOptions read_report_options(const po::variables_map& vm) {
  ReportOptions out;
  if (vm.count("report")) {
    for (const auto& spec : vm["report"].as<std::vector<std::string>>()) {
      try {
        out.requests.push_back(reports::parse_report_request(spec));
      } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
      }
    }
  }
  if (vm.count("baseline")) {
    const auto path = vm["baseline"].as<std::string>();
    try {
      out.baseline = reports::read_results_file(path);
    } catch (const std::exception& e) {
      throw UsageError(fmt::format("--baseline {}: not a chaosbench results file: {}", path, e.what()));
    }
  }
  out.annotations = vm.count("annotations") > 0;
  out.allow_env_diff = vm.count("allow-env-diff") > 0;
  out.quiet = vm.count("quiet") > 0;
  return out;
}

void check_baseline_environment(const ReportOptions& options, const reports::Environment& current) {
  if (!options.baseline) return;
  check_same_environment(options.baseline->environment, current, "--baseline", "the baseline", options.allow_env_diff);
}

int finish_reports(reports::RunResult& result, const std::string& dir, const ReportOptions& options,
                   VerdictSource source) {
  if (options.baseline) {
    auto comparison = reports::compare_runs(*options.baseline, result);
    comparison.baseline_run = options.baseline->run_id;
    comparison.baseline_started_at = options.baseline->started_at;
    reports::judge_comparison(result, std::move(comparison));
  }
  auto requests = options.requests.empty() ? reports::default_reports() : options.requests;
  bool console = false;
  for (const auto& r : requests) console = console || r.format == reports::ReportFormat::kConsole;
  bool written = true;
  try {
    reports::write_reports(result, dir, requests);
  } catch (const std::runtime_error& e) {
    std::cerr << "chaosbench: " << e.what() << "\n";
    written = false;
  }
  if (!console) {
    if (options.quiet) std::cout << dir << "/results.json\n";
    else std::cout << reports::console_summary(result, dir);
  }
  if (options.annotations)
    for (const auto& line : reports::github_annotations(result, options.scenario_file)) std::cout << line << "\n";
  if (!written && result.verdict == reports::Verdict::kPass)
    return exit_code_for(reports::Verdict::kError, VerdictSource::kHostLimit);
  return exit_code_for(result.verdict, source);
}

}  // namespace chaosbench::harness

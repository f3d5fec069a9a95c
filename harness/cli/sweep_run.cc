#include "harness/cli/sweep_run.h"

#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "common/files/trusted_directory.h"
#include "harness/core/exit_code.h"
#include "harness/core/host_error.h"
#include "harness/core/host_error.h"
#include "harness/run/run_directory.h"
#include "reports/advice/sweep_report.h"

namespace chaosbench::harness {

int run_sweep(const std::string& scenario_text, const std::string& scenario_file, const LoadOptions& load, const Scenario& scenario,
              const RunOptions& run, const ReportOptions& reports) {
  const auto points = sweep_points(scenario.sweep);
  const std::string base = RunDirectory::resolve_out(run.out_dir, scenario.name);
  if (std::string why = common::make_trusted_directory(base, 0750); !why.empty())
    throw HostError(fmt::format("output directory: {}", why));
  std::vector<reports::SweepPointResult> results;
  for (std::size_t i = 0; i < points.size(); ++i) {
    LoadOptions point_load = load;
    point_load.no_sweep = true;
    point_load.overrides.insert(point_load.overrides.end(), points[i].overrides.begin(), points[i].overrides.end());
    auto loaded = parse_scenario(scenario_text, scenario_file, point_load);
    RunOptions point_run = run;
    point_run.out_dir = fmt::format("{}/point-{:02d}", base, i + 1);
    spdlog::info("sweep point {}/{}: {}", i + 1, points.size(), points[i].label);
    auto outcome = run_scenario(loaded.scenario, point_run);
    ReportOptions point_reports = reports;
    point_reports.quiet = true;  // one line per point; the sweep's table follows
    int code = finish_reports(outcome.result, outcome.run_dir, point_reports, outcome.source);
    results.push_back({points[i].label, points[i].overrides, outcome.run_dir, std::move(outcome.result)});
    if (code == kExitInterrupted || code == kExitHost || code == kExitUsage) return code;
  }
  auto summary = reports::summarize_sweep(scenario.name, std::move(results));
  write_file_atomically(base + "/sweep.json", reports::sweep_to_json(summary));
  write_file_atomically(base + "/sweep.md", reports::render_sweep_markdown(summary));
  if (reports.quiet) std::cout << base << "/sweep.json\n";
  else std::cout << reports::render_sweep_console(summary) << "\n  sweep: " << base << "/sweep.md\n";
  // A sweep passes when some point passed its checks and was recommended.
  return exit_code_for(summary.best ? reports::Verdict::kPass : reports::Verdict::kFail);
}

}  // namespace chaosbench::harness

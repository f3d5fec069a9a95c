// chaosbench report RESULTS.json — every report again, from results.json alone.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "common/files/trusted_directory.h"
#include "harness/cli/cli_options.h"
#include "harness/core/exit_code.h"
#include "harness/core/host_error.h"
#include "harness/cli/report_output.h"
#include "reports/model/json_io.h"

namespace chaosbench::harness {

int cmd_report(const Args& args) {
  po::options_description options("Options");
  options.add_options()
      ("results", po::value<std::string>(), "results.json of a run")
      ("out,o", po::value<std::string>(), "directory for the reports (default: the results file's directory)");
  add_report_options(options);
  po::positional_options_description positional;
  positional.add("results", 1);
  auto cl = parse_command_line(args, options, positional);
  if (cl.help) {
    print_help("chaosbench report RESULTS.json [--out DIR] [--report FORMAT[=FILE]]... [--baseline RESULTS.json]",
               "Writes the reports of a finished run from its results.json alone: report.html, summary.md,\n"
               "junit.xml and trace.json (results.json too when --out is another directory). With\n"
               "--baseline, compares and gates as `run --baseline` does (exit 1 on a regression).",
               options);
    return kExitPass;
  }
  if (!cl.vm.count("results")) throw UsageError("no results file given");
  const auto path = cl.vm["results"].as<std::string>();
  reports::RunResult result;
  try {
    result = reports::read_results_file(path);
  } catch (const std::exception& e) {
    throw UsageError(fmt::format("{}: not a chaosbench results file: {}", path, e.what()));
  }
  auto options_read = read_report_options(cl.vm);
  check_baseline_environment(options_read, result.environment);
  namespace fs = std::filesystem;
  const fs::path source_dir = fs::absolute(path).parent_path();
  const std::string dir = cl.vm.count("out") ? cl.vm["out"].as<std::string>() : source_dir.string();
  if (std::string why = common::make_trusted_directory(dir, 0750); !why.empty())
    throw HostError(fmt::format("output directory: {}", why));
  if (options_read.requests.empty()) {
    // The input stays as it is unless the reports go elsewhere or a comparison changes it.
    for (auto& r : reports::default_reports())
      if (r.format != reports::ReportFormat::kJson || fs::absolute(dir) != source_dir || options_read.baseline)
        options_read.requests.push_back(r);
  }
  return finish_reports(result, dir, options_read, VerdictSource::kStored);
}

}  // namespace chaosbench::harness

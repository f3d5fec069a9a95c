// chaosbench validate SCENARIO.json... — schema and semantic checks with precise errors.
#include <fmt/format.h>
#include <algorithm>
#include <iostream>

#include "faults/registry.h"
#include "harness/cli/cli_options.h"
#include "harness/cli/exit_code.h"
#include "harness/scenario/scenario_loader.h"

namespace chaosbench::harness {
namespace {

// Says which backend each fault will use on this host; false when one cannot run here
// (run would exit 3 before starting anything).
bool host_can_run(const std::string& file, const Scenario& scenario, bool quiet) {
  bool ok = true;
  for (std::size_t i = 0; i < scenario.faults.size(); ++i) {
    const auto& f = scenario.faults[i];
    const auto* info = faults::find_fault_type(f.type);
    if (!info || !info->host_backend) continue;
    std::string why;
    std::string backend = info->host_backend(f.params, &why);
    if (backend.empty()) {
      std::cerr << fmt::format("{}: faults[{}] ({}, {}): cannot run on this host: {}\n", file, i, f.name, f.type, why);
      ok = false;
    } else if (!quiet) {
      std::cout << fmt::format("  faults[{}] {} ({}): backend {} on this host\n", i, f.name, f.type, backend);
    }
  }
  return ok;
}

}  // namespace

int cmd_validate(const Args& args) {
  po::options_description options("Options");
  options.add_options()
      ("scenario", po::value<std::vector<std::string>>()->multitoken(), "scenario files")
      ("set", po::value<std::vector<std::string>>()->composing(), "KEY=VALUE override, as for run (repeatable)")
      ("portable", "check the file only, not whether this host can run its faults");
  po::positional_options_description positional;
  positional.add("scenario", -1);
  auto cl = parse_command_line(args, options, positional);
  if (cl.help) {
    print_help("chaosbench validate SCENARIO.json... [--set KEY=VALUE]... [--portable]",
               "Checks each scenario file against the format (docs/scenario-format.md) and its semantics:\n"
               "every error names the file, line:column, the JSON path and what was expected.\n"
               "Then, unless --portable, whether this host can run each fault, and with which backend.\n"
               "Exit 0 when every file is valid, 2 otherwise, 3 when a valid file cannot run on this host.",
               options);
    return kExitPass;
  }
  if (!cl.vm.count("scenario")) throw UsageError("no scenario file given");
  LoadOptions load;
  if (cl.vm.count("set")) load.overrides = cl.vm["set"].as<std::vector<std::string>>();
  int rc = kExitPass;
  bool quiet = cl.vm.count("quiet") > 0;
  for (const auto& file : cl.vm["scenario"].as<std::vector<std::string>>()) {
    try {
      auto result = load_scenario(file, load);
      for (const auto& w : result.warnings) std::cerr << format_diagnostic(w) << "\n";
      if (!quiet) std::cout << fmt::format("{}: ok ({})\n", file, result.scenario.name);
      if (!cl.vm.count("portable") && !host_can_run(file, result.scenario, quiet)) rc = std::max<int>(rc, kExitHost);
    } catch (const ScenarioError& e) {
      for (const auto& d : e.diagnostics()) std::cerr << format_diagnostic(d) << "\n";
      rc = kExitUsage;
    }
  }
  return rc;
}

}  // namespace chaosbench::harness

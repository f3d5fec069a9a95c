// chaosbench diagnose RESULTS.json [--json] — blind fault localisation after the run
// (reports/diagnosis/diagnoser.h, docs/diagnosis.md): the culprits the run's measurements name, with
// evidence and confidence, read from its series alone (never its fault list, phases or
// schedule).
#include <iostream>

#include "harness/cli/cli_options.h"
#include "harness/cli/commands.h"
#include "harness/core/exit_code.h"
#include "harness/cli/results_file.h"
#include "reports/diagnosis/diagnoser.h"
#include "reports/diagnosis/diagnosis_output.h"

namespace chaosbench::harness {

int cmd_diagnose(const Args& args) {
  po::options_description options("Options");
  options.add_options()("results", po::value<std::string>(), "RESULTS.json")(
      "json", po::bool_switch(), "print the diagnosis as JSON");
  po::positional_options_description positional;
  positional.add("results", 1);
  auto cl = parse_command_line(args, options, positional);
  if (cl.help) {
    print_help("chaosbench diagnose RESULTS.json [--json]",
               "Names the most likely culprits of what a run measured (a CPU-starved node, a slow or lossy link, a\n"
               "slow or lossy NIC, a slow device) from its series alone: the link mesh, the nodes' telemetry and the\n"
               "ranks' compute times, each against its own baseline and its peers. It never reads the fault list.\n"
               "Exit codes: 0 diagnosed (named or not), 2 a usage error or an unreadable results file.",
               options);
    return kExitPass;
  }
  if (!cl.vm.count("results")) throw UsageError("diagnose: name a results.json");
  auto run = load_results_file("diagnose", cl.vm["results"].as<std::string>());
  if (!run) return kExitUsage;
  auto d = reports::diagnose_series(run->series, run->processes);
  std::cout << (cl.vm["json"].as<bool>() ? reports::diagnosis_json(d) : reports::diagnosis_text(d));
  return kExitPass;
}

}  // namespace chaosbench::harness

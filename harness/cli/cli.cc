#include "harness/cli/cli.h"

#include <array>
#include <fmt/format.h>
#include <iostream>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <string_view>

#include "harness/cli/commands.h"
#include "harness/core/exit_code.h"
#include "harness/core/host_error.h"
#include "harness/scenario/diagnostic.h"

namespace chaosbench::harness {
namespace {

struct Command {
  std::string_view name;
  std::string_view summary;
  int (*run)(const Args&);
  bool listed;
};

constexpr std::array<Command, 16> kCommands{{
    {"run", "run a scenario: cluster, workload, faults, metrics, checks, reports", cmd_run, true},
    {"validate", "check scenario files: schema and semantics, with precise errors", cmd_validate, true},
    {"faults", "the fault catalogue: types, parameters, units, defaults", cmd_faults, true},
    {"metrics", "the metric catalogue: names, units, better-direction", cmd_metrics, true},
    {"report", "write every report of a run again from its results.json", cmd_report, true},
    {"doctor", "what this host can inject, and with which backend", cmd_doctor, true},
    {"compare", "compare two results files per metric; --gate fails on significant regressions", cmd_compare, true},
    {"history", "keep runs per testbed x scenario; gate a run against the last K, with change points", cmd_history, true},
    {"model", "goodput model: goodput, ETTR and the optimal checkpoint interval from 1 to 100,000 nodes", cmd_model, true},
    {"diagnose", "name the culprit of a run's slowdown (node, link, NIC, device) from its measurements alone", cmd_diagnose, true},
    {"cleanup", "revert everything journaled by runs that died", cmd_cleanup, true},
    {"stop", "the kill switch: stop a running run now (faults reverted, verdict aborted, exit 4)", cmd_stop, true},
    {"bench", "benchmarks: the micro-benchmark suite and the harness's own (cluster, delay line, shaper)", cmd_bench, true},
    {"version", "print the version", cmd_version, true},
    {"worker", "a built-in workload process (started by run)", cmd_worker, false},
    {"agent", "serve one host of a multi-host run (started by run)", cmd_agent, false},
}};

void print_usage(std::ostream& out) {
  out << "chaosbench — chaos engineering and benchmarking for distributed AI training and inference\n\n"
         "Usage: chaosbench COMMAND [OPTIONS]\n\nCommands:\n";
  for (const auto& c : kCommands)
    if (c.listed) out << fmt::format("  {:<10} {}\n", c.name, c.summary);
  out << "\n`chaosbench COMMAND --help` describes each command.\n"
         "Exit codes: 0 pass, 1 a check or gate failed, 2 usage or scenario error,\n"
         "3 the host cannot do what was asked, 4 aborted (a stop condition or chaosbench stop), 130 interrupted.\n";
}

void setup_logging() {
  // Logs go to stderr so stdout stays for results (--json, tables).
  auto logger = spdlog::stderr_color_mt("chaosbench");
  logger->set_pattern("%^%l%$: %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::info);
}

}  // namespace

int cli_main(int argc, char** argv) {
  if (!spdlog::get("chaosbench")) setup_logging();
  if (argc < 2) {
    print_usage(std::cerr);
    return kExitUsage;
  }
  std::string_view name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    print_usage(std::cout);
    return kExitPass;
  }
  if (name == "--version") return cmd_version({});
  Args args(argv + 2, argv + argc);
  for (const auto& c : kCommands) {
    if (c.name != name) continue;
    try {
      return c.run(args);
    } catch (const UsageError& e) {
      std::cerr << "chaosbench " << name << ": " << e.what() << "\n(see chaosbench " << name << " --help)\n";
      return kExitUsage;
    } catch (const ScenarioError& e) {
      for (const auto& d : e.diagnostics()) std::cerr << format_diagnostic(d) << "\n";
      return kExitUsage;
    } catch (const HostError& e) {
      std::cerr << "chaosbench " << name << ": " << e.what() << "\n";
      return exit_code_for(reports::Verdict::kError, VerdictSource::kHostLimit);
    } catch (const std::exception& e) {
      std::cerr << "chaosbench " << name << ": error: " << e.what() << "\n";
      return exit_code_for(reports::Verdict::kError);
    }
  }
  std::cerr << fmt::format("chaosbench: unknown command \"{}\"\n\n", name);
  print_usage(std::cerr);
  return kExitUsage;
}

}  // namespace chaosbench::harness

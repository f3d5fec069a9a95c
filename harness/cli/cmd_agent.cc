// chaosbench agent — the controller's hands on one host (harness/agent/agent.h). Started
// by `chaosbench run` over SSH or as a Slurm step, never by hand; the run's secret comes
// on standard input (its first line), so no command line or environment shows it.
#include <fmt/format.h>
#include <cstdlib>
#include <iostream>
#include <spdlog/spdlog.h>

#include "harness/agent/agent.h"
#include "harness/cli/cli_options.h"
#include "harness/core/exit_code.h"
#include "harness/process/signal_guard.h"

namespace chaosbench::harness {

int cmd_agent(const Args& args) {
  po::options_description options("Options");
  options.add_options()
      ("controller", po::value<std::string>()->required(), "ADDRESS:PORT the controller listens on")
      ("run-id", po::value<std::string>()->required(), "the run this agent belongs to")
      ("host", po::value<std::string>(), "this host's name in the inventory")
      ("node", po::value<int>(), "the node this host serves")
      ("slurm", "a task of a Slurm step: the node is SLURM_PROCID, the host SLURMD_NODENAME")
      ("timeout", po::value<double>()->default_value(10.0), "dead-man switch: seconds of controller silence");
  auto cl = parse_command_line(args, options, {});
  if (cl.help) {
    print_help("chaosbench agent --controller ADDRESS:PORT --run-id ID (--host NAME --node N | --slurm) < secret",
               "Serves one host of a multi-host run: dials back to the controller, proves it knows the\n"
               "run's secret (the first line of standard input), then starts the node's ranks, applies\n"
               "and reverts its faults and forwards its metrics. When the controller is gone or silent\n"
               "for --timeout seconds it reverts every fault, stops every rank and exits.",
               options);
    return kExitPass;
  }
  AgentOptions o;
  const std::string controller = cl.vm["controller"].as<std::string>();
  const auto colon = controller.rfind(':');
  if (colon == std::string::npos) throw UsageError("--controller: expected ADDRESS:PORT");
  o.controller_address = controller.substr(0, colon);
  try {
    o.controller_port = std::stoi(controller.substr(colon + 1));
  } catch (const std::exception&) {
    throw UsageError("--controller: expected ADDRESS:PORT");
  }
  o.run_id = cl.vm["run-id"].as<std::string>();
  if (cl.vm.count("slurm")) {
    // The task's rank in the step: with one task per node it numbers the step's nodes
    // 0..N-1 (SLURM_NODEID counts within the whole allocation, which may be larger).
    const char* id = std::getenv("SLURM_PROCID");
    const char* name = std::getenv("SLURMD_NODENAME");
    if (!id || !name) throw UsageError("--slurm: not a task of a Slurm step (no SLURM_PROCID or SLURMD_NODENAME)");
    o.node = std::atoi(id);
    o.host = name;
  } else {
    if (!cl.vm.count("node") || !cl.vm.count("host")) throw UsageError("--node and --host are required without --slurm");
    o.node = cl.vm["node"].as<int>();
    o.host = cl.vm["host"].as<std::string>();
  }
  const double timeout = cl.vm["timeout"].as<double>();
  if (!(timeout > 0 && timeout <= 3600)) throw UsageError("--timeout: expected seconds, more than 0 and at most 3600");
  o.timeout = std::chrono::milliseconds(static_cast<long>(timeout * 1000));
  if (!std::getline(std::cin, o.secret) || o.secret.size() != 64) {
    spdlog::error("agent {}: no run secret on standard input (expected 64 hex digits on the first line)", o.host);
    return kExitUsage;
  }
  SignalGuard signals;  // SIGINT/SIGTERM: clean up, then exit
  Agent agent(std::move(o));
  return agent.run();
}

}  // namespace chaosbench::harness

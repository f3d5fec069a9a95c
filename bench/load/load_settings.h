// The load generator's settings: what a scenario's serve workload sets in its "load" block,
// with the one definition of every default. The scenario parser fills it
// (harness/scenario/serve_workload_parser.cc); the launcher encodes it into the
// `chaosbench worker load` command line and the worker decodes it back. The endpoints, the
// model name and the row width come from the serve workload: the launcher adds them.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "bench/common/program_options_fwd.h"
#include "bench/load/load_scenario.h"
#include "common/values/units.h"

namespace chaosbench::bench::load {

struct LoadSettings {
  LoadScenario scenario = LoadScenario::kServer;
  double qps = 100;  // server scenario only: mean Poisson arrival rate
  // How long requests are issued. A scenario's load runs 20s unless it says otherwise
  // (harness LoadSpec); this is the worker's own default.
  common::Duration duration{std::chrono::seconds(10)};
  int rows = 1;          // rows per infer request
  int connections = 32;  // keep-alive connections per endpoint
  common::Duration timeout{std::chrono::seconds(1)};  // per attempt, from the time it was queued
  // How often infer/throughput and infer/error_rate are reported, each over the window
  // just ended. Shorter windows let a stop condition on the error rate see a fault sooner.
  common::Duration window{std::chrono::seconds(1)};

  bool operator==(const LoadSettings&) const = default;
};

// The settings as `chaosbench worker load` flags ("--scenario", "server", ...); durations
// in whole milliseconds ("--duration", "20000ms"; "--timeout-ms", "1000").
std::vector<std::string> encode_load_settings(const LoadSettings& s);

// Declares the settings' flags, with LoadSettings{}'s defaults, on `options`.
void add_load_settings_flags(boost::program_options::options_description& options);
// Reads them back from a parsed command line; throws std::invalid_argument naming the
// flag ("--scenario: expected server, offline or single-stream").
LoadSettings read_load_settings(const boost::program_options::variables_map& vm);
// add + parse + read in one: the settings of a command line made only of these flags.
LoadSettings decode_load_settings(const std::vector<std::string>& flags);

}  // namespace chaosbench::bench::load

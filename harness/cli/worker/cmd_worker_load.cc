// chaosbench worker load [...] — MLPerf LoadGen-style load (server, offline, single-stream)
// against one or more KServe v2 HTTP endpoints. Reports infer/latency (every request),
// infer/throughput and infer/error_rate (per second) to CHAOSBENCH_METRICS when set, and
// prints a summary at the end.
#include "harness/cli/worker/cmd_worker_load.h"

#include <iostream>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/http/http_client_endpoint.h"
#include "bench/load/load_config.h"
#include "bench/load/load_generator.h"
#include "bench/load/load_settings.h"
#include "bench/load/readiness.h"
#include "bench/load/load_report.h"
#include "harness/cli/cli_options.h"
#include "harness/core/exit_code.h"
#include "harness/cli/worker/worker_args.h"

namespace chaosbench::harness {
namespace {

std::vector<bench::http::HttpClientEndpoint> endpoint_list(const std::string& text) {
  std::string error;
  auto endpoints = bench::http::parse_http_endpoint_list(text, error);
  if (!endpoints) throw UsageError("--endpoints: " + error);
  return *endpoints;
}

}  // namespace

int worker_load(const Args& args) {
  // The request's flags default to LoadConfig{}'s, the settings' to LoadSettings{}'s.
  const bench::load::LoadConfig d;
  po::options_description options("Options");
  options.add_options()
      ("endpoints", po::value<std::string>(), "comma-separated http://host:port (required)")
      ("model", po::value<std::string>()->default_value(d.model), "model name in /v2/models/NAME/infer")
      ("input-name", po::value<std::string>()->default_value(d.input_name), "name of the input tensor");
  bench::load::add_load_settings_flags(options);
  options.add_options()
      ("dim", po::value<int>()->default_value(d.dim), "FP32 values per row")
      ("path", po::value<std::string>()->default_value(""), "send METHOD PATH instead of infer requests")
      ("method", po::value<std::string>()->default_value(d.method), "with --path")
      ("body", po::value<std::string>()->default_value(""), "with --path: fixed request body")
      ("seed", po::value<std::uint64_t>()->default_value(d.seed), "arrival and data seed")
      ("wait-ready-ms", po::value<long>()->default_value(30000),
       "first wait this long for every endpoint's GET /v2/health/ready to answer 200 (0: do not wait)");
  auto cl = parse_command_line(args, options, {});
  if (cl.help) {
    print_help("chaosbench worker load --endpoints http://host:port[,...] [options]",
               "Open-loop (server), maximum-throughput (offline) or one-at-a-time (single-stream) load\n"
               "against KServe v2 HTTP endpoints, with round-robin and failover. Latency counts from each\n"
               "request's scheduled time. Reports to CHAOSBENCH_METRICS when set.",
               options);
    return kExitPass;
  }
  if (!cl.vm.count("endpoints")) throw UsageError("--endpoints is required: comma-separated http://host:port");
  const auto& vm = cl.vm;
  const auto endpoints = endpoint_list(vm["endpoints"].as<std::string>());
  auto cfg = bench::load::load_config(read_settings(vm, bench::load::read_load_settings));
  cfg.endpoints = endpoints;
  cfg.model = vm["model"].as<std::string>();
  cfg.input_name = vm["input-name"].as<std::string>();
  cfg.dim = vm["dim"].as<int>();
  cfg.path = vm["path"].as<std::string>();
  cfg.method = vm["method"].as<std::string>();
  cfg.body = vm["body"].as<std::string>();
  cfg.seed = vm["seed"].as<std::uint64_t>();
  if (auto why = bench::load::load_config_error(cfg)) throw UsageError(*why);
  if (const long wait = vm["wait-ready-ms"].as<long>(); wait > 0 && cfg.path.empty()) {
    // A server still loading its model is not yet under test: its start-up is no error.
    auto not_ready = bench::load::wait_until_ready(cfg.endpoints, std::chrono::milliseconds(wait));
    if (!not_ready.empty())
      std::cerr << "load: not ready after " << wait << " ms, starting anyway: " << fmt::format("{}", fmt::join(not_ready, ", "))
                << "\n";
  }
  auto metrics = bench::MetricsClient::from_environment();
  bench::load::LoadGenerator generator(cfg, metrics);
  const auto result = generator.run();
  std::cout << bench::load::format_load_summary(result) << std::flush;
  return kExitPass;
}

}  // namespace chaosbench::harness

// chaosbench worker serve [...] — the built-in inference server (bench/serve): the
// trainer's MLP behind the KServe v2 HTTP protocol with a dynamic batcher. Stops on
// SIGTERM; reports to CHAOSBENCH_METRICS when set.
#include "harness/cli/worker/cmd_worker_serve.h"

#include <fmt/format.h>

#include "bench/serve/serve_settings.h"
#include "bench/serve/serve_worker.h"
#include "common/values/units.h"
#include "harness/cli/cli_options.h"
#include "harness/core/exit_code.h"
#include "harness/cli/worker/worker_args.h"

namespace chaosbench::harness {
int worker_serve(const Args& args) {
  // The server's own flags default to ServeConfig{}'s, the settings' to ServeSettings{}'s.
  const bench::serve::ServeConfig d;
  po::options_description options("Options");
  bench::serve::add_serve_settings_flags(options);
  options.add_options()
      ("seed", po::value<std::uint64_t>()->default_value(d.seed), "weight seed when there is no checkpoint")
      ("host", po::value<std::string>()->default_value(d.http.host), "address to bind")
      ("threads", po::value<int>()->default_value(d.http.threads), "HTTP io threads")
      ("blas-threads", po::value<int>()->default_value(d.blas_threads), "OpenBLAS threads for the model")
      ("body-limit", po::value<std::string>()->default_value(common::to_string(common::Size{d.http.body_limit})),
       "largest request body (413 above)")
      ("max-connections", po::value<long>()->default_value(static_cast<long>(d.http.max_connections)),
       "open connections at most (503 and close above)")
      ("max-buffered", po::value<std::string>()->default_value(common::to_string(common::Size{d.http.max_buffered})),
       "request-body bytes buffered over all connections (503 above)")
      ("request-timeout", po::value<std::string>()->default_value(common::to_string(common::Duration{d.http.request_timeout})),
       "from a request's first byte to its last (408 above)");
  auto cl = parse_command_line(args, options, {});
  if (cl.help) {
    print_help("chaosbench worker serve [options]",
               "The built-in KServe v2 inference server: GET /v2/health/{live,ready}, GET /v2/models/NAME,\n"
               "POST /v2/models/NAME/infer, GET /metrics. Stops on SIGTERM. Reports infer/batch_size and\n"
               "infer/queue_time to CHAOSBENCH_METRICS when set.",
               options);
    return kExitPass;
  }
  const auto& vm = cl.vm;
  auto cfg = bench::serve::serve_config(read_settings(vm, bench::serve::read_serve_settings));
  cfg.seed = vm["seed"].as<std::uint64_t>();
  cfg.http.host = vm["host"].as<std::string>();
  cfg.http.threads = vm["threads"].as<int>();
  cfg.blas_threads = vm["blas-threads"].as<int>();
  auto body_limit = common::parse_size(vm["body-limit"].as<std::string>());
  if (!body_limit) throw UsageError("--body-limit: " + body_limit.error);
  cfg.http.body_limit = body_limit->bytes;
  const long max_connections = vm["max-connections"].as<long>();
  if (max_connections < 1 || max_connections > bench::serve::kMaxConnectionsLimit)
    throw UsageError(fmt::format("--max-connections: from 1 to {}", bench::serve::kMaxConnectionsLimit));
  cfg.http.max_connections = static_cast<std::size_t>(max_connections);
  auto max_buffered = common::parse_size(vm["max-buffered"].as<std::string>());
  if (!max_buffered) throw UsageError("--max-buffered: " + max_buffered.error);
  cfg.http.max_buffered = max_buffered->bytes;
  auto timeout = common::parse_duration(vm["request-timeout"].as<std::string>());
  if (!timeout) throw UsageError("--request-timeout: " + timeout.error);
  cfg.http.request_timeout = std::chrono::duration_cast<std::chrono::milliseconds>(timeout->value);
  if (auto why = bench::serve::serve_config_error(cfg)) throw UsageError(*why);
  auto metrics = bench::MetricsClient::from_environment();
  return bench::serve::run_server(cfg, metrics);
}

}  // namespace chaosbench::harness

// chaosbench worker serve [...] — the built-in inference server (bench/serve): the
// trainer's MLP behind the KServe v2 HTTP protocol with a dynamic batcher. Stops on
// SIGTERM; reports to CHAOSBENCH_METRICS when set.
#include "harness/cli/cmd_worker_serve.h"


#include <fmt/format.h>

#include "bench/serve/serve_worker.h"
#include "common/units.h"
#include "harness/cli/cli_options.h"
#include "harness/cli/worker_args.h"
#include "harness/cli/exit_code.h"

namespace chaosbench::harness {
int worker_serve(const Args& args) {
  po::options_description options("Options");
  options.add_options()
      ("model", po::value<std::string>()->default_value("mlp"), "model name in /v2/models/NAME")
      ("layers", po::value<std::string>()->default_value("256,1024,1024,1024,16"), "layer widths, input first")
      ("dtype", po::value<std::string>()->default_value("fp32"), "fp32 or int8 weights")
      ("checkpoint-dir", po::value<std::string>()->default_value(""), "the trainer's checkpoints (empty: seeded weights)")
      ("seed", po::value<std::uint64_t>()->default_value(42), "weight seed when there is no checkpoint")
      ("host", po::value<std::string>()->default_value("127.0.0.1"), "address to bind")
      ("port", po::value<unsigned short>()->default_value(8000), "port to listen on (0: any)")
      ("threads", po::value<int>()->default_value(2), "HTTP io threads")
      ("blas-threads", po::value<int>()->default_value(1), "OpenBLAS threads for the model")
      ("max-batch-size", po::value<int>()->default_value(64), "rows per model call")
      ("max-queue-delay-us", po::value<long>()->default_value(2000), "how long a request waits for a batch")
      ("preferred-batch-sizes", po::value<std::string>()->default_value(""), "comma-separated; dispatch at once at the largest")
      ("queue-limit", po::value<int>()->default_value(1024), "waiting requests before 503")
      ("body-limit", po::value<std::string>()->default_value("4MiB"), "largest request body (413 above)")
      ("max-connections", po::value<long>()->default_value(512), "open connections at most (503 and close above)")
      ("max-buffered", po::value<std::string>()->default_value("64MiB"), "request-body bytes buffered over all connections (503 above)")
      ("request-timeout", po::value<std::string>()->default_value("30s"), "from a request's first byte to its last (408 above)");
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
  bench::serve::ServeConfig cfg;
  cfg.model_name = vm["model"].as<std::string>();
  cfg.layers = int_list(vm["layers"].as<std::string>(), "layers");
  cfg.dtype = vm["dtype"].as<std::string>();
  cfg.checkpoint_dir = vm["checkpoint-dir"].as<std::string>();
  cfg.seed = vm["seed"].as<std::uint64_t>();
  cfg.http.host = vm["host"].as<std::string>();
  cfg.http.port = vm["port"].as<unsigned short>();
  cfg.http.threads = vm["threads"].as<int>();
  cfg.blas_threads = vm["blas-threads"].as<int>();
  cfg.batching.max_batch_size = vm["max-batch-size"].as<int>();
  cfg.batching.max_queue_delay = std::chrono::microseconds(vm["max-queue-delay-us"].as<long>());
  cfg.batching.preferred_batch_sizes = int_list(vm["preferred-batch-sizes"].as<std::string>(), "preferred-batch-sizes");
  cfg.batching.queue_limit = vm["queue-limit"].as<int>();
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

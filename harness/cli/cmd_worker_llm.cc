// chaosbench worker llm-serve [...] — the built-in OpenAI-compatible server (bench/llm)
// with the synthetic token engine: the ground truth for LLM serving benchmarks. Stops on
// SIGTERM.
#include "harness/cli/cmd_worker_llm.h"

#include "bench/llm/llm_serve_worker.h"
#include "common/units.h"
#include "harness/cli/cli_options.h"
#include "harness/cli/exit_code.h"
#include "harness/cli/worker_args.h"

namespace chaosbench::harness {
namespace {

std::chrono::nanoseconds duration_flag(const po::variables_map& vm, const char* name) {
  auto d = common::parse_duration(vm[name].as<std::string>());
  if (!d) throw UsageError(std::string("--") + name + ": " + d.error);
  return d->value;
}

}  // namespace

int worker_llm_serve(const Args& args) {
  const bench::llm::LlmServeConfig d;
  po::options_description options("Options");
  options.add_options()
      ("host", po::value<std::string>()->default_value(d.http.host), "address to bind")
      ("port", po::value<int>()->default_value(0), "port to bind (0: any free one, printed when ready)")
      ("model", po::value<std::string>()->default_value(d.http.model), "the served model's name")
      ("context", po::value<int>()->default_value(d.http.context_tokens), "context length in tokens")
      ("synthetic-first-token", po::value<std::string>()->default_value("150ms"), "delay to the first token")
      ("synthetic-cadence", po::value<std::string>()->default_value("20ms"), "then one token per this")
      ("synthetic-tokens", po::value<int>()->default_value(d.timing.tokens),
       "tokens per answer, at most max_tokens (0: always max_tokens; ignore_eos: max_tokens)")
      ("max-running", po::value<long>()->default_value(static_cast<long>(d.http.max_running)),
       "requests generating at once (429 above)")
      ("threads", po::value<int>()->default_value(d.http.threads), "io threads");
  auto cl = parse_command_line(args, options, {});
  if (cl.help) {
    print_help("chaosbench worker llm-serve [options]",
               "The built-in OpenAI-compatible server with a synthetic engine: POST /v1/completions,\n"
               "POST /v1/chat/completions (streamed or not), GET /v1/models, GET /health, GET /metrics.\n"
               "Prints \"llm-serve: ... on HOST:PORT\" on stderr when ready; stops on SIGTERM.",
               options);
    return kExitPass;
  }
  const auto& vm = cl.vm;
  bench::llm::LlmServeConfig cfg;
  cfg.http.host = vm["host"].as<std::string>();
  const int port = vm["port"].as<int>();
  if (port < 0 || port > 65535) throw UsageError("--port: from 0 to 65535");
  cfg.http.port = static_cast<unsigned short>(port);
  cfg.http.model = vm["model"].as<std::string>();
  cfg.http.context_tokens = vm["context"].as<int>();
  cfg.timing.first_token_delay = duration_flag(vm, "synthetic-first-token");
  cfg.timing.cadence = duration_flag(vm, "synthetic-cadence");
  cfg.timing.tokens = vm["synthetic-tokens"].as<int>();
  const long max_running = vm["max-running"].as<long>();
  if (max_running < 1 || max_running > 1'000'000) throw UsageError("--max-running: from 1 to 1000000");
  cfg.http.max_running = static_cast<std::size_t>(max_running);
  cfg.http.threads = vm["threads"].as<int>();
  if (auto why = bench::llm::llm_serve_config_error(cfg)) throw UsageError(*why);
  auto metrics = bench::MetricsClient::from_environment();
  return bench::llm::run_llm_server(cfg, metrics);
}

}  // namespace chaosbench::harness

// chaosbench worker llm-serve [...] — the built-in OpenAI-compatible server (bench/llm)
// with the engine its settings name: the CPU transformer (bench/llm/transformer/) or the
// synthetic one, the ground truth for LLM serving benchmarks. The settings' flags are the
// scenario launcher's contract (llm_serve_settings.h); host, seed and threads are per
// launch. Stops on SIGTERM.
#include "harness/cli/worker/cmd_worker_llm.h"

#include <stdexcept>

#include "bench/llm/serve/llm_serve_worker.h"
#include "harness/cli/cli_options.h"
#include "harness/core/exit_code.h"
#include "harness/cli/worker/worker_args.h"

namespace chaosbench::harness {

int worker_llm_serve(const Args& args) {
  const bench::llm::LlmServeConfig d;
  po::options_description options("Options");
  bench::llm::add_llm_serve_settings_flags(options);
  options.add_options()
      ("host", po::value<std::string>()->default_value(d.host), "address to bind")
      ("seed", po::value<std::uint64_t>()->default_value(d.seed), "transformer: weights and default sampling seed")
      ("threads", po::value<int>()->default_value(d.io_threads), "io threads");
  auto cl = parse_command_line(args, options, {});
  if (cl.help) {
    print_help("chaosbench worker llm-serve [options]",
               "The built-in OpenAI-compatible LLM server: POST /v1/completions, POST /v1/chat/completions\n"
               "(streamed or not), GET /v1/models, GET /health, GET /metrics (vLLM's names). Engine\n"
               "\"transformer\": a seeded decoder-only transformer on the CPU with continuous batching and a\n"
               "paged KV cache; \"synthetic\": fixed timing, no model. --port 0 binds any free port.\n"
               "Prints \"llm-serve: ... on HOST:PORT\" on stderr when ready; stops on SIGTERM.",
               options);
    return kExitPass;
  }
  const auto& vm = cl.vm;
  bench::llm::LlmServeConfig cfg;
  try {
    cfg.settings = bench::llm::read_llm_serve_settings(vm);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  cfg.host = vm["host"].as<std::string>();
  cfg.seed = vm["seed"].as<std::uint64_t>();
  cfg.io_threads = vm["threads"].as<int>();
  if (auto why = bench::llm::llm_serve_config_error(cfg)) throw UsageError(*why);
  auto metrics = bench::MetricsClient::from_environment();
  return bench::llm::run_llm_server(cfg, metrics);
}

}  // namespace chaosbench::harness

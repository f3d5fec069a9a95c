// chaosbench worker llm-load [...] — load against OpenAI-compatible LLM endpoints
// (bench/llm/load/llm_load_generator.h): the settings' flags (llm_load_settings.h) plus
// --endpoints, --model and --seed, which the scenario launcher adds per launch. Waits
// (bounded) for every endpoint's GET /health or /v1/models first. Reports to
// CHAOSBENCH_METRICS when set; prints a JSON summary (or the find_peak bracket) on stdout.
// SIGTERM/SIGINT end the run (also the readiness wait): streams in flight count as
// cancelled, the summary is printed.
// Exit: 0 when it ran (request errors are the harness's to judge), 2 for usage errors (bad
// flags, an unreadable or malformed --dataset), 1 when an endpoint never became ready or
// find_peak found no bracket.
#include "harness/cli/worker/cmd_worker_llm_load.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/common/scoped_signal.h"
#include "bench/http/http_client_endpoint.h"
#include "bench/llm/load/llm_load_generator.h"
#include "bench/llm/load/llm_peak_search.h"
#include "bench/llm/load/prompt_file.h"
#include "bench/load/readiness.h"
#include "harness/core/exit_code.h"
#include "harness/cli/worker/worker_args.h"

namespace chaosbench::harness {
namespace {

std::atomic<bool> g_llm_load_stop{false};  // lock-free: safe to set from a signal handler
extern "C" void on_llm_load_signal(int) { g_llm_load_stop.store(true); }

std::vector<bench::http::HttpClientEndpoint> llm_endpoints(const std::string& text) {
  std::string error;
  auto endpoints = bench::http::parse_http_endpoint_list(text, error);
  if (!endpoints) throw UsageError("--endpoints: " + error);
  return *endpoints;
}

std::vector<bench::llm::LlmRequest> dataset(const bench::llm::LlmLoadSettings& s) {
  if (s.dataset.empty()) return {};
  try {
    auto file = bench::llm::read_prompt_jsonl(s.dataset);
    if (file.requests.empty()) throw UsageError("--dataset " + s.dataset + ": no prompts in the file");
    return std::move(file.requests);
  } catch (const bench::llm::PromptFileError& e) {
    throw UsageError(std::string("--dataset: ") + e.what());
  }
}

// Waits for every endpoint's GET /health or /v1/models to answer 200, in slices so that a
// stop signal is seen. -1: all ready; else the exit code (1: not ready in time, 0: stopped,
// with an empty summary).
int wait_ready(const bench::llm::LlmLoadPlan& plan, std::chrono::milliseconds limit) {
  // A server still loading its model is not yet under test: its start-up is no error.
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::vector<std::string> not_ready;
  do {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    not_ready = bench::load::wait_until_ready(plan.endpoints, std::clamp(left, std::chrono::milliseconds(1),
                                                                         std::chrono::milliseconds(500)),
                                              {"/health", "/v1/models"});
    if (g_llm_load_stop.load()) {
      std::cout << bench::llm::format_llm_load_summary({}) << std::endl;
      return kExitPass;
    }
  } while (!not_ready.empty() && std::chrono::steady_clock::now() < deadline);
  if (not_ready.empty()) return -1;
  std::cerr << fmt::format("llm-load: not ready after {} ms (GET /health and /v1/models did not answer 200): {}\n",
                           limit.count(), fmt::join(not_ready, ", "));
  return kExitCheckFailed;
}

int run_plan(const bench::llm::LlmLoadPlan& plan, bench::MetricsClient& metrics) {
  if (plan.settings.find_peak) {
    const auto peak = bench::llm::run_llm_peak_search(plan, metrics, g_llm_load_stop);
    std::cout << bench::llm::describe_peak(peak) << std::endl;
    return peak.highest_passing && peak.lowest_failing ? kExitPass : kExitCheckFailed;
  }
  bench::llm::LlmLoadGenerator generator(plan, metrics, g_llm_load_stop);
  const auto result = generator.run();
  std::cout << bench::llm::format_llm_load_summary(result) << std::endl;
  return kExitPass;
}

}  // namespace

int worker_llm_load(const Args& args) {
  const bench::llm::LlmLoadPlan defaults;
  po::options_description options("Options");
  options.add_options()
      ("endpoints", po::value<std::string>(), "comma-separated http://host:port (required)")
      ("model", po::value<std::string>()->default_value(defaults.model), "the model name sent")
      ("seed", po::value<std::uint64_t>()->default_value(1), "arrivals, lengths and prompts seed");
  bench::llm::add_llm_load_settings_flags(options);
  options.add_options()
      ("wait-ready-ms", po::value<long>()->default_value(30000),
       "wait this long for every endpoint's GET /health or /v1/models to answer 200 (0: do not wait)")
      ("itl-samples-per-s", po::value<double>()->default_value(defaults.itl_budget_per_s),
       "send at most this many infer/itl samples a second (a uniform subsample above)");
  auto cl = parse_command_line(args, options, {});
  if (cl.help) {
    print_help("chaosbench worker llm-load --endpoints http://host:port[,...] [options]",
               "Streams completions or chat completions from OpenAI-compatible endpoints (round-robin,\n"
               "failover on connect errors): open-loop Poisson or constant arrivals, or fixed concurrency.\n"
               "TTFT, TPOT, ITL and e2e count from each request's scheduled time. Reports to\n"
               "CHAOSBENCH_METRICS when set; prints a JSON summary. --find-peak true searches the highest\n"
               "rate meeting the SLO instead.",
               options);
    return kExitPass;
  }
  const auto& vm = cl.vm;
  if (!vm.count("endpoints")) throw UsageError("--endpoints is required: comma-separated http://host:port");
  bench::llm::LlmLoadPlan plan;
  plan.settings = read_settings(vm, bench::llm::read_llm_load_settings);
  plan.endpoints = llm_endpoints(vm["endpoints"].as<std::string>());
  plan.model = vm["model"].as<std::string>();
  if (plan.model.empty()) throw UsageError("--model: expected a model name");
  plan.seed = vm["seed"].as<std::uint64_t>();
  plan.itl_budget_per_s = vm["itl-samples-per-s"].as<double>();
  if (!(plan.itl_budget_per_s >= 0)) throw UsageError("--itl-samples-per-s: expected a rate >= 0");
  plan.prompts = dataset(plan.settings);
  g_llm_load_stop.store(false);
  bench::ScopedSignal term(SIGTERM, on_llm_load_signal);
  bench::ScopedSignal interrupt(SIGINT, on_llm_load_signal);
  bench::ScopedSignal pipe(SIGPIPE, SIG_IGN);
  if (const long wait = vm["wait-ready-ms"].as<long>(); wait > 0) {
    if (int code = wait_ready(plan, std::chrono::milliseconds(wait)); code >= 0) return code;
  }
  auto metrics = bench::MetricsClient::from_environment();
  return run_plan(plan, metrics);
}

}  // namespace chaosbench::harness

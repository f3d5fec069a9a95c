// run_llm_server: engine and server, then the main thread waits for a signal.
#include "bench/llm/llm_serve_worker.h"

#include <fmt/format.h>

#include <csignal>
#include <iostream>
#include <thread>

#include "bench/common/scoped_signal.h"

namespace chaosbench::bench::llm {
namespace {

volatile std::sig_atomic_t g_stop = 0;
extern "C" void on_llm_stop_signal(int) { g_stop = 1; }

}  // namespace

std::optional<std::string> llm_serve_config_error(const LlmServeConfig& cfg) {
  const auto& h = cfg.http;
  if (h.model.empty() || h.model.find_first_of("\"\\\n/") != std::string::npos)
    return "--model: a non-empty name without '/', '\"', '\\' or newlines";
  if (h.context_tokens < 1) return "--context: must be >= 1";
  if (h.max_running < 1) return "--max-running: must be >= 1";
  if (h.threads < 1) return "--threads: must be >= 1";
  if (cfg.timing.tokens < 0) return "--synthetic-tokens: must be >= 0";
  if (cfg.timing.cadence.count() < 0 || cfg.timing.first_token_delay.count() < 0)
    return "--synthetic-first-token, --synthetic-cadence: must be >= 0";
  return std::nullopt;
}

int run_llm_server(const LlmServeConfig& cfg, MetricsClient& metrics) {
  g_stop = 0;
  ScopedSignal term(SIGTERM, on_llm_stop_signal);
  ScopedSignal interrupt(SIGINT, on_llm_stop_signal);
  ScopedSignal pipe(SIGPIPE, SIG_IGN);
  const auto timing = cfg.timing;
  LlmHttpServer server(cfg.http, [timing](boost::asio::io_context& ioc) {
    return std::make_unique<SyntheticEngine>(ioc, timing);
  });
  std::cerr << fmt::format("llm-serve: synthetic \"{}\" (first token {} ms, then one per {} ms, {} tokens) on {}:{}\n",
                           cfg.http.model, std::chrono::duration<double, std::milli>(timing.first_token_delay).count(),
                           std::chrono::duration<double, std::milli>(timing.cadence).count(), timing.tokens,
                           cfg.http.host, server.port());
  metrics.event("llm_serve_ready", {{"port", static_cast<std::int64_t>(server.port())}});
  metrics.flush();
  while (!g_stop) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  server.stop();
  metrics.event("llm_serve_stopped",
                {{"generation_tokens", static_cast<std::int64_t>(server.metrics().generation_tokens())}});
  metrics.flush();
  std::cerr << "llm-serve: stopped\n";
  return 0;
}

}  // namespace chaosbench::bench::llm

// run_llm_server: engine and server, then the main thread reports gauges until a signal.
#include "bench/llm/serve/llm_serve_worker.h"

#include <fmt/format.h>

#include <csignal>
#include <iostream>
#include <thread>

#include "bench/common/device_faults.h"
#include "bench/common/scoped_signal.h"
#include "bench/llm/synthetic_engine.h"
#include "bench/llm/transformer/transformer_engine.h"
#include "bench/serve/serve_worker.h"
#include "bench/compute/cpu_device.h"

namespace chaosbench::bench::llm {
namespace {

volatile std::sig_atomic_t g_stop = 0;
extern "C" void on_llm_stop_signal(int) { g_stop = 1; }

constexpr auto kTick = std::chrono::milliseconds(100);
constexpr int kTicksPerSample = 10;  // gauges once a second

void sample_gauges(const TokenEngine& engine, std::uint64_t& preemptions_seen, MetricsClient& metrics) {
  const auto preemptions = engine.preemptions();
  metrics.sample("llm/running", static_cast<double>(engine.running()), "requests");
  metrics.sample("llm/waiting", static_cast<double>(engine.waiting()), "requests");
  metrics.sample("llm/kv_cache_usage", 100.0 * engine.kv_cache_usage(), "%");
  metrics.sample("llm/preemptions", static_cast<double>(preemptions - preemptions_seen), "count");
  preemptions_seen = preemptions;
  metrics.flush();
}

}  // namespace

std::optional<std::string> llm_serve_config_error(const LlmServeConfig& cfg) {
  const auto& s = cfg.settings;
  if (s.model_name.find_first_of("\"\\\n/") != std::string::npos)
    return "--model: a name without '/', '\"', '\\' or newlines";
  if (auto why = validate(s); !why.empty()) return why;
  if (cfg.io_threads < 1) return "--threads: must be >= 1";
  return std::nullopt;
}

LlmServerConfig llm_server_config(const LlmServeConfig& cfg) {
  const auto& s = cfg.settings;
  LlmServerConfig http;
  http.host = cfg.host;
  http.port = static_cast<unsigned short>(s.port);
  http.threads = cfg.io_threads;
  http.model = s.model_name;
  http.context_tokens = s.context;
  http.max_running = static_cast<std::size_t>(s.scheduler.max_running);
  // The transformer refuses past its batch and queue; the HTTP layer only must not first.
  if (s.engine == "transformer") http.max_running += static_cast<std::size_t>(s.scheduler.max_waiting) + 1;
  return http;
}

EngineFactory llm_engine_factory(const LlmServeConfig& cfg) {
  const auto& s = cfg.settings;
  if (s.engine == "synthetic") {
    const SyntheticTiming timing{s.synthetic.first_token.value, s.synthetic.cadence.value, s.synthetic.tokens};
    return [timing](boost::asio::io_context& ioc) { return std::make_unique<SyntheticEngine>(ioc, timing); };
  }
  TransformerEngineConfig e;
  e.model = s.model;
  e.scheduler = s.scheduler;
  e.context = s.context;
  e.seed = cfg.seed;
  e.threads = s.engine_threads;
  std::string why;
  e.faults = DeviceFaults::from_env(&why);
  if (!why.empty()) fmt::print(stderr, "GPU faults disabled: {}\n", why);
  if (e.faults && !e.faults->active()) e.faults.reset();
  return [e](boost::asio::io_context&) { return std::make_unique<TransformerEngine>(e); };
}

int run_llm_server(const LlmServeConfig& cfg, MetricsClient& metrics) {
  g_stop = 0;
  ScopedSignal term(SIGTERM, on_llm_stop_signal);
  ScopedSignal interrupt(SIGINT, on_llm_stop_signal);
  ScopedSignal pipe(SIGPIPE, SIG_IGN);
  const auto& s = cfg.settings;
  // OpenBLAS runs one thread inside each of the engine's (linear_layer.h).
  train::make_cpu_device(1);  // sets OpenBLAS's process-wide thread count
  LlmHttpServer server(llm_server_config(cfg), llm_engine_factory(cfg));
  const std::string what =
      s.engine == "synthetic"
          ? fmt::format("synthetic (first token {} ms, then one per {} ms, {} tokens)",
                        std::chrono::duration<double, std::milli>(s.synthetic.first_token.value).count(),
                        std::chrono::duration<double, std::milli>(s.synthetic.cadence.value).count(), s.synthetic.tokens)
          : static_cast<const TransformerEngine&>(server.engine()).describe();
  std::cerr << fmt::format("llm-serve: {} as \"{}\" on {}:{}\n", what, s.model_name, cfg.host, server.port());
  metrics.event("llm_serve_ready", {{"port", static_cast<std::int64_t>(server.port())}});
  metrics.flush();
  std::uint64_t preemptions_seen = 0;
  int exit_code = 0;
  for (int tick = 1; !g_stop; ++tick) {
    std::this_thread::sleep_for(kTick);
    if (metrics.connected() && tick % kTicksPerSample == 0) sample_gauges(server.engine(), preemptions_seen, metrics);
    // A lost device (gpu.xid): the requests of the failed step got an error answer; the
    // replica ends now, as the serve workload's does, so restart_after can bring it back.
    if (auto lost = server.engine().device_lost()) {
      metrics.event("failure_detected", {{"error", *lost}, {"reason", std::string("device")}});
      std::cerr << fmt::format("llm-serve: the device is lost ({}): exiting\n", *lost);
      exit_code = serve::kServeDeviceLost;
      break;
    }
  }
  server.stop();
  metrics.event("llm_serve_stopped",
                {{"generation_tokens", static_cast<std::int64_t>(server.metrics().generation_tokens())}});
  metrics.flush();
  std::cerr << "llm-serve: stopped\n";
  return exit_code;
}

}  // namespace chaosbench::bench::llm

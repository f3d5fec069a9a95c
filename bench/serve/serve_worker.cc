// run_server: model, service, HTTP server, then the main thread waits for a signal and
// forwards samples.
#include "bench/serve/serve_worker.h"

#include <fmt/format.h>

#include <atomic>
#include <csignal>
#include <iostream>
#include <thread>

#include "bench/common/device_faults.h"
#include "bench/common/scoped_signal.h"
#include "bench/serve/fault_injecting_model.h"
#include "bench/serve/inference_service.h"
#include "bench/compute/cpu_device.h"

namespace chaosbench::bench::serve {
namespace {

volatile std::sig_atomic_t g_stop = 0;
extern "C" void on_stop_signal(int) { g_stop = 1; }

void forward_samples(ServeMetrics& from, MetricsClient& to) {
  for (const auto& s : from.drain_samples()) to.sample(s.name, s.value, s.unit, {}, s.time);
  to.flush();
}

}  // namespace

ServeConfig serve_config(const ServeSettings& s) {
  ServeConfig cfg;
  cfg.model_name = s.model_name;
  cfg.layers = s.layers;
  cfg.dtype = s.dtype;
  cfg.checkpoint_dir = s.checkpoint_dir;
  cfg.http.port = static_cast<unsigned short>(s.port);
  cfg.batching.max_batch_size = s.batching.max_batch_size;
  cfg.batching.max_queue_delay = std::chrono::duration_cast<std::chrono::microseconds>(s.batching.max_queue_delay.value);
  cfg.batching.preferred_batch_sizes = s.batching.preferred_batch_sizes;
  cfg.batching.queue_limit = s.queue_limit;
  return cfg;
}

std::optional<std::string> serve_config_error(const ServeConfig& cfg) {
  if (cfg.layers.size() < 2) return "--layers: at least an input and an output width";
  for (int w : cfg.layers)
    if (w < 1) return "--layers: widths must be >= 1";
  if (cfg.dtype != "fp32" && cfg.dtype != "int8") return "--dtype: expected fp32 or int8";
  if (cfg.batching.max_batch_size < 1 || cfg.batching.max_batch_size > kMaxBatchSizeLimit)
    return fmt::format("--max-batch-size: from 1 to {}", kMaxBatchSizeLimit);
  if (cfg.batching.max_queue_delay.count() < 0) return "--max-queue-delay-us: must be >= 0";
  for (int p : cfg.batching.preferred_batch_sizes)
    if (p < 1 || p > cfg.batching.max_batch_size) return "--preferred-batch-sizes: each in 1..max-batch-size";
  if (cfg.batching.queue_limit < 1) return "--queue-limit: must be >= 1";
  if (cfg.http.threads < 1) return "--threads: must be >= 1";
  if (cfg.blas_threads < 1) return "--blas-threads: must be >= 1";
  if (cfg.http.body_limit < 1024) return "--body-limit: at least 1KiB";
  if (cfg.http.max_buffered < cfg.http.body_limit) return "--max-buffered: at least --body-limit";
  if (cfg.http.request_timeout < std::chrono::milliseconds(100)) return "--request-timeout: at least 100ms";
  if (cfg.model_name.empty() || cfg.model_name.find('/') != std::string::npos)
    return "--model: a non-empty name without '/'";
  return std::nullopt;
}

int run_server(const ServeConfig& cfg, MetricsClient& metrics) {
  train::make_cpu_device(cfg.blas_threads);  // sets OpenBLAS's process-wide thread count
  const auto weights = load_weights(cfg.layers, cfg.checkpoint_dir.empty() ? std::nullopt
                                                                            : std::optional<std::string>(cfg.checkpoint_dir),
                                    cfg.seed);
  std::string why;
  auto faults = DeviceFaults::from_env(&why);
  if (!why.empty()) fmt::print(stderr, "GPU faults disabled: {}\n", why);
  auto model = with_faults(cfg.dtype == "int8" ? make_int8_model(weights, cfg.batching.max_batch_size)
                                               : make_fp32_model(weights, cfg.batching.max_batch_size),
                           faults);
  g_stop = 0;
  ScopedSignal term(SIGTERM, on_stop_signal);
  ScopedSignal interrupt(SIGINT, on_stop_signal);
  ScopedSignal pipe(SIGPIPE, SIG_IGN);
  InferenceService service(cfg.model_name, *model, cfg.batching);
  HttpServer server(cfg.http, service);
  std::cerr << fmt::format("serve: {} as \"{}\" on {}:{} (max batch {}, delay {} us, queue limit {})\n",
                           model->describe(), cfg.model_name, cfg.http.host, server.port(),
                           cfg.batching.max_batch_size, cfg.batching.max_queue_delay.count(),
                           cfg.batching.queue_limit);
  metrics.event("serve_ready", {{"port", static_cast<std::int64_t>(server.port())}});
  metrics.flush();
  int exit_code = 0;
  while (!g_stop) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    forward_samples(service.metrics(), metrics);
    // A lost device (a sticky GPU error): the replica has answered 500 and not ready
    // since; it ends now, as a liveness probe would end it, so it can be restarted.
    if (auto lost = model->unhealthy()) {
      metrics.event("failure_detected", {{"error", *lost}, {"reason", std::string("device")}});
      std::cerr << fmt::format("serve: the device is lost ({}): exiting\n", *lost);
      exit_code = kServeDeviceLost;
      break;
    }
  }
  server.stop();
  forward_samples(service.metrics(), metrics);
  metrics.event("serve_stopped", {{"requests_200", static_cast<std::int64_t>(service.metrics().requests(200))}});
  metrics.flush();
  std::cerr << "serve: stopped\n";
  return exit_code;
}

}  // namespace chaosbench::bench::serve

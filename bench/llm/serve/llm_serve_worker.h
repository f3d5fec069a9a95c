// `chaosbench worker llm-serve`: the built-in OpenAI-compatible server with the engine its
// settings name (the transformer, or the synthetic one), served until SIGTERM/SIGINT.
// Announces readiness on stderr ("llm-serve: ... on HOST:PORT") and as the metrics event
// llm_serve_ready {port}; while serving, sends the engine's gauges every second when the
// harness collects metrics (llm/running, llm/waiting, llm/kv_cache_usage in %,
// llm/preemptions per interval).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "bench/llm/serve/llm_http_server.h"
#include "bench/llm/llm_serve_settings.h"
#include "bench/protocol/metrics_client.h"

namespace chaosbench::bench::llm {

struct LlmServeConfig {
  LlmServeSettings settings;
  std::string host = "127.0.0.1";
  std::uint64_t seed = 1;  // the transformer's weights and default sampling seeds
  int io_threads = 2;
};

// nullopt when cfg is usable, else why not (for a usage error).
std::optional<std::string> llm_serve_config_error(const LlmServeConfig& cfg);

// The HTTP layer's config for these settings: the transformer engine bounds requests
// itself (max_running + max_waiting), the synthetic one has no queue (max_running).
LlmServerConfig llm_server_config(const LlmServeConfig& cfg);
// The engine the settings name, on the server's io_context.
EngineFactory llm_engine_factory(const LlmServeConfig& cfg);

// Blocks until SIGTERM or SIGINT; returns the exit code (0).
int run_llm_server(const LlmServeConfig& cfg, MetricsClient& metrics);

}  // namespace chaosbench::bench::llm

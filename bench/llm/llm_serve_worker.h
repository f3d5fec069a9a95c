// `chaosbench worker llm-serve`: the built-in OpenAI-compatible server with the synthetic
// engine, served until SIGTERM/SIGINT. Announces readiness on stderr
// ("llm-serve: ... on HOST:PORT") and as the metrics event llm_serve_ready {port}.
#pragma once

#include <optional>
#include <string>

#include "bench/llm/llm_http_server.h"
#include "bench/llm/synthetic_engine.h"
#include "bench/protocol/metrics_client.h"

namespace chaosbench::bench::llm {

struct LlmServeConfig {
  LlmServerConfig http;
  SyntheticTiming timing;
};

// nullopt when cfg is usable, else why not (for a usage error).
std::optional<std::string> llm_serve_config_error(const LlmServeConfig& cfg);

// Blocks until SIGTERM or SIGINT; returns the exit code (0).
int run_llm_server(const LlmServeConfig& cfg, MetricsClient& metrics);

}  // namespace chaosbench::bench::llm

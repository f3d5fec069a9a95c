// What a load run does: the scenario (MLPerf LoadGen's server, offline, single-stream), the
// endpoints it spreads requests over and the request it sends. A plain value; the
// LoadGenerator (load_generator.h) makes it real.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/http/http_client_endpoint.h"
#include "bench/load/load_scenario.h"
#include "bench/load/load_settings.h"

namespace chaosbench::bench::load {

struct LoadConfig {
  std::vector<http::HttpClientEndpoint> endpoints;
  // The settings' part, with their defaults (load_settings.h; see there for meanings).
  LoadScenario scenario = LoadSettings{}.scenario;
  double qps = LoadSettings{}.qps;
  std::chrono::nanoseconds duration = LoadSettings{}.duration.value;
  int connections = LoadSettings{}.connections;
  std::chrono::milliseconds timeout = std::chrono::duration_cast<std::chrono::milliseconds>(LoadSettings{}.timeout.value);
  std::chrono::milliseconds window = std::chrono::duration_cast<std::chrono::milliseconds>(LoadSettings{}.window.value);
  // The request: POST /v2/models/{model}/infer with `rows` x `dim` random FP32 values,
  // unless `path` is set, when `method` `path` with `body` (may be empty) is sent instead.
  std::string model = "mlp";
  std::string input_name = "input";
  int rows = LoadSettings{}.rows;
  int dim = 256;
  int body_variants = 16;  // distinct pre-built infer bodies, sent in turn
  std::string path;
  std::string method = "GET";
  std::string body;
  std::uint64_t seed = 1;
  // Keep every request's scheduled time and latency in the result (tests, analysis).
  bool keep_requests = false;
};

// `settings` as a LoadConfig; the rest (endpoints, the request) as LoadConfig{}'s.
LoadConfig load_config(const LoadSettings& settings);

// Why `config` cannot run, or std::nullopt.
std::optional<std::string> load_config_error(const LoadConfig& config);

}  // namespace chaosbench::bench::load

// What a load run does: the scenario (MLPerf LoadGen's server, offline, single-stream), the
// endpoints it spreads requests over and the request it sends. A plain value; the
// LoadGenerator (load_generator.h) makes it real.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace chaosbench::bench::load {

enum class LoadScenario {
  kServer,        // open loop: Poisson arrivals at `qps` for `duration`
  kOffline,       // maximum throughput: every connection keeps one request in flight
  kSingleStream,  // one request at a time, the next when the previous finishes
};

std::optional<LoadScenario> parse_load_scenario(std::string_view text);
const char* to_string(LoadScenario scenario);

// "http://host:port" (port 80 when left out; a trailing path is refused).
struct Endpoint {
  std::string host;
  std::uint16_t port = 80;
  std::string text() const { return host + ":" + std::to_string(port); }
};

// The endpoint, or std::nullopt with `error` saying why not.
std::optional<Endpoint> parse_endpoint(std::string_view url, std::string& error);

struct LoadConfig {
  std::vector<Endpoint> endpoints;
  LoadScenario scenario = LoadScenario::kServer;
  double qps = 100;  // server scenario only
  std::chrono::nanoseconds duration = std::chrono::seconds(10);
  int connections = 32;  // per endpoint
  std::chrono::milliseconds timeout{1000};  // per attempt, from the time it was queued
  // The request: POST /v2/models/{model}/infer with `rows` x `dim` random FP32 values,
  // unless `path` is set, when `method` `path` with `body` (may be empty) is sent instead.
  std::string model = "mlp";
  std::string input_name = "input";
  int rows = 1;
  int dim = 256;
  int body_variants = 16;  // distinct pre-built infer bodies, sent in turn
  std::string path;
  std::string method = "GET";
  std::string body;
  std::uint64_t seed = 1;
  // Keep every request's scheduled time and latency in the result (tests, analysis).
  bool keep_requests = false;
};

// Why `config` cannot run, or std::nullopt.
std::optional<std::string> load_config_error(const LoadConfig& config);

}  // namespace chaosbench::bench::load

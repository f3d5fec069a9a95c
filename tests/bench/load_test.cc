// The load generator (bench/load/) against the in-process trivial server: the scenarios,
// Poisson arrivals, latency from the scheduled time, failover and timeouts.
#include <catch2/catch.hpp>


#include <algorithm>
#include <cmath>
#include <iostream>
#include <numeric>

#include "bench/http/http_client_endpoint.h"
#include "bench/load/load_generator.h"
#include "bench/load/trivial_server.h"

namespace load_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

namespace load = chaosbench::bench::load;
namespace http = chaosbench::bench::http;
using namespace std::chrono_literals;

namespace {

http::HttpClientEndpoint endpoint_of(const load::TrivialServer& server) {
  std::string error;
  return *http::parse_http_endpoint(server.url(), error);
}

// A port nothing listens on: bound, then closed.
std::uint16_t closed_port() {
  load::TrivialServer server({});
  return server.port();
}

// Server scenario on GET /v2/health/live, keeping every request's record.
load::LoadConfig health_server_config(const load::TrivialServer& server, double qps,
                                      std::chrono::milliseconds duration) {
  load::LoadConfig config;
  config.endpoints = {endpoint_of(server)};
  config.scenario = load::LoadScenario::kServer;
  config.qps = qps;
  config.duration = duration;
  config.path = "/v2/health/live";
  config.keep_requests = true;
  return config;
}

load::LoadResult run(const load::LoadConfig& config) {
  chaosbench::bench::MetricsClient metrics;
  load::LoadGenerator generator(config, metrics);
  return generator.run();
}

}  // namespace

TEST_CASE("load: endpoints parse as http://host:port", "[load]") {
  std::string error;
  auto e = http::parse_http_endpoint("http://10.0.0.1:8000", error);
  REQUIRE(e);
  CHECK(e->host == "10.0.0.1");
  CHECK(e->port == 8000);
  CHECK(http::parse_http_endpoint("http://svc", error)->port == 80);
  CHECK_FALSE(http::parse_http_endpoint("10.0.0.1:8000", error));
  CHECK_FALSE(http::parse_http_endpoint("http://h:99999", error));
  CHECK_FALSE(http::parse_http_endpoint("http://h:80/v2", error));
}

TEST_CASE("load: offline completes every request without errors", "[load]") {
  load::TrivialServer server({});
  load::LoadConfig config;
  config.endpoints = {endpoint_of(server)};
  config.scenario = load::LoadScenario::kOffline;
  config.duration = 1s;
  config.connections = 16;
  config.rows = 2;
  config.dim = 16;  // real infer bodies, with Content-Length
  const auto r = run(config);
  std::cout << "load offline (infer bodies, 16 connections): " << r.throughput() << " req/s\n";
  CHECK(r.completed > 1000);
  CHECK(r.completed == r.issued);
  CHECK(r.errors == 0);
  CHECK(r.failovers == 0);
  CHECK(server.requests() == r.completed);
  CHECK(r.latency.p50_ms > 0);
}

TEST_CASE("load: server scenario sends Poisson arrivals at the target rate", "[load]") {
  load::TrivialServer server({});
  const auto r = run(health_server_config(server, 500, 2s));
  CHECK(r.issued == Approx(1000).epsilon(0.10));
  CHECK(r.errors == 0);
  REQUIRE(r.requests.size() > 100);
  auto scheduled = r.requests;
  std::sort(scheduled.begin(), scheduled.end(), [](auto& a, auto& b) { return a.scheduled_s < b.scheduled_s; });
  std::vector<double> gaps;
  for (std::size_t i = 1; i < scheduled.size(); ++i) gaps.push_back(scheduled[i].scheduled_s - scheduled[i - 1].scheduled_s);
  const double mean = std::accumulate(gaps.begin(), gaps.end(), 0.0) / static_cast<double>(gaps.size());
  CHECK(mean == Approx(0.002).epsilon(0.10));
  // Exponential: the standard deviation equals the mean (a fixed pace would give ~0).
  double var = 0;
  for (double g : gaps) var += (g - mean) * (g - mean);
  CHECK(std::sqrt(var / static_cast<double>(gaps.size())) == Approx(mean).epsilon(0.2));
  CHECK(r.latency.p50_ms < 50);
}

TEST_CASE("load: a stalled server shows in the latency of requests scheduled during the stall", "[load]") {
  load::TrivialServerOptions options;
  options.stall_after = 100;  // about 0.5 s in
  options.stall = 300ms;
  load::TrivialServer server(options);
  const auto r = run(health_server_config(server, 200, 1500ms));
  CHECK(r.errors == 0);
  // The stall starts when the 100th request arrives.
  auto by_time = r.requests;
  std::sort(by_time.begin(), by_time.end(), [](auto& a, auto& b) { return a.scheduled_s < b.scheduled_s; });
  REQUIRE(by_time.size() > 150);
  const double stall_start = by_time[99].scheduled_s;
  std::vector<float> during;
  for (const auto& q : by_time)
    if (q.scheduled_s >= stall_start && q.scheduled_s < stall_start + 0.03) during.push_back(q.latency_ms);
  REQUIRE(during.size() >= 2);
  const float worst = *std::max_element(during.begin(), during.end());
  INFO("requests scheduled in the first 30 ms of the stall: " << during.size());
  CHECK(worst >= 250);
  CHECK(r.latency.p99_ms >= 200);
}

TEST_CASE("load: a closed endpoint fails over without errors", "[load]") {
  load::TrivialServer server({});
  load::LoadConfig config;
  std::string error;
  config.endpoints = {*http::parse_http_endpoint("http://127.0.0.1:" + std::to_string(closed_port()), error),
                      endpoint_of(server)};
  config.scenario = load::LoadScenario::kServer;
  config.qps = 300;
  config.duration = 1s;
  config.connections = 4;
  config.path = "/v2/health/live";
  const auto r = run(config);
  CHECK(r.errors == 0);
  CHECK(r.error_rate() == 0);
  CHECK(r.failovers > 0);
  CHECK(r.connect_errors == r.failovers);
  CHECK(r.completed == r.issued);
}

TEST_CASE("load: a timeout is an error when there is no other endpoint", "[load]") {
  load::TrivialServerOptions options;
  options.respond = false;
  load::TrivialServer silent(options);
  load::LoadConfig config;
  config.endpoints = {endpoint_of(silent)};
  config.scenario = load::LoadScenario::kSingleStream;
  config.duration = 500ms;
  config.timeout = 100ms;
  config.path = "/v2/health/live";
  const auto r = run(config);
  CHECK(r.completed == 0);
  CHECK(r.timeouts >= 4);
  CHECK(r.errors == r.issued);
  CHECK(r.error_rate() == 100);
  CHECK(r.failovers == 0);
}

TEST_CASE("load: a timeout fails over to the next endpoint", "[load]") {
  load::TrivialServerOptions options;
  options.respond = false;
  load::TrivialServer silent(options);
  load::TrivialServer server({});
  load::LoadConfig config;
  config.endpoints = {endpoint_of(silent), endpoint_of(server)};
  config.scenario = load::LoadScenario::kServer;
  config.qps = 100;
  config.duration = 500ms;
  config.timeout = 100ms;
  config.path = "/v2/health/live";
  const auto r = run(config);
  CHECK(r.errors == 0);
  CHECK(r.timeouts > 0);
  CHECK(r.failovers == r.timeouts);
  CHECK(r.completed == r.issued);
}

}  // namespace load_test

// What the llm-load tests share: the built-in synthetic server in-process on an ephemeral
// loopback port (stopped by its destructor, so even a failed test cleans up), a plan
// aimed at given ports, and a run of the generator with no harness attached.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <vector>

#include "bench/llm/serve/llm_http_server.h"
#include "bench/llm/load/llm_load_generator.h"
#include "bench/llm/synthetic_engine.h"
#include "bench/protocol/metrics_client.h"

namespace chaosbench::test {

inline std::unique_ptr<bench::llm::LlmHttpServer> synthetic_server(bench::llm::SyntheticTiming timing,
                                                                   bench::llm::LlmServerConfig cfg = {}) {
  cfg.model = "synth";
  return std::make_unique<bench::llm::LlmHttpServer>(cfg, [timing](boost::asio::io_context& ioc) {
    return std::make_unique<bench::llm::SyntheticEngine>(ioc, timing);
  });
}

inline bench::llm::LlmLoadPlan plan_for(const std::vector<unsigned short>& ports) {
  bench::llm::LlmLoadPlan plan;
  plan.model = "synth";
  for (auto p : ports) plan.endpoints.push_back({"127.0.0.1", p});
  plan.settings.timeout = common::Duration{std::chrono::seconds(10)};
  return plan;
}

inline bench::llm::LlmLoadResult run_plan(const bench::llm::LlmLoadPlan& plan) {
  bench::MetricsClient metrics;  // not connected: every call a no-op
  std::atomic<bool> stop{false};
  bench::llm::LlmLoadGenerator generator(plan, metrics, stop);
  return generator.run();
}

inline bench::llm::LengthSpec fixed_length(double n) {
  bench::llm::LengthSpec s;
  s.mean = n;
  return s;
}

}  // namespace chaosbench::test

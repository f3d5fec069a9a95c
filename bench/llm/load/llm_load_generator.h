// The LLM load generator: drives any OpenAI-compatible endpoint (POST /v1/completions or
// /v1/chat/completions, streamed or not) with open-loop Poisson or constant-rate arrivals
// or a closed loop of fixed concurrency (llm_load_settings.h), and reports through an
// LlmLoadRecorder. A client of the open-loop engine (bench/openloop/open_loop_engine.h):
// this file is the arrival process, llm_exchange.h what each request sends and reads.
//
// One thread runs the engine's epoll loop over non-blocking connections, one per request
// in flight, kept alive and reused when the server allows; each read is timestamped as it
// returns, and the loop never blocks but in epoll_wait (a second thread writes the
// metrics). Every latency counts from the request's scheduled time (its arrival; in the
// closed loop, the moment its slot freed), so a slow client or server cannot hide
// queueing (no coordinated omission). Open loop: a request due while max_in_flight are in
// flight fails at once as `rejected` instead of queueing.
//
// Endpoints take requests in turn. A connect failure (refused, reset, or closed before any
// answer byte) moves the request to the next endpoint, keeping its scheduled time, until
// every endpoint was tried (each move counted as a failover); the endpoint that refused is
// skipped for a second. A reused keep-alive socket closed by the server before answering
// is resent once, not counted. Each request fails as `timeout` at scheduled + timeout.
// stop() (any thread, or a signal through the flag given) ends the run: requests in
// flight are counted `cancelled`. After the issuing time, the run waits for the requests
// in flight, each bounded by its own timeout.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bench/http/http_client_endpoint.h"
#include "bench/llm/load/llm_load_result.h"
#include "bench/llm/load/llm_load_settings.h"
#include "bench/llm/load/token_dataset.h"
#include "bench/protocol/metrics_client.h"

namespace chaosbench::bench::llm {

struct LlmLoadPlan {
  LlmLoadSettings settings;
  std::vector<http::HttpClientEndpoint> endpoints;
  std::string model = "chaosbench-tiny";  // what llm-serve serves unless told otherwise
  std::uint64_t seed = 1;
  std::vector<LlmRequest> prompts;  // from a dataset file, sent in turn; empty: synthetic
  double itl_budget_per_s = 10000;  // infer/itl samples per second at most (llm_load_recorder.h)
  bool send_samples = true;         // false: no per-request or per-window metrics (find_peak trials)
};

class LlmLoadGenerator {
 public:
  // Resolves the endpoints; throws std::runtime_error naming one that does not resolve.
  // `stop` may be set from any thread or a signal handler to end the run.
  LlmLoadGenerator(LlmLoadPlan plan, MetricsClient& metrics, const std::atomic<bool>& stop);
  ~LlmLoadGenerator();
  LlmLoadGenerator(const LlmLoadGenerator&) = delete;
  LlmLoadGenerator& operator=(const LlmLoadGenerator&) = delete;

  // Runs once (blocking) and returns what it measured. While it runs, a writer thread of
  // its own sends the records through `metrics` (llm_metrics_queue.h), so the caller must
  // not use that client until run() returns.
  LlmLoadResult run();

 private:
  struct Loop;
  std::unique_ptr<Loop> loop_;
};

}  // namespace chaosbench::bench::llm

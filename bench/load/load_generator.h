// An open- and closed-loop HTTP load generator for any KServe v2 server, after MLPerf
// LoadGen's scenarios (load_config.h). A client of the open-loop engine
// (bench/openloop/open_loop_engine.h): this file holds the scenario's arrivals, the
// requests' bytes and what an answer means; the engine runs one thread, one epoll loop
// over a fixed pool of keep-alive connections per endpoint (`connections` each; a request
// finding them all busy waits for one), spreading requests round-robin.
//
// Latency is measured from each request's SCHEDULED send time — its Poisson arrival in the
// server scenario, the moment a slot freed in the others — to its answer, so a generator
// that falls behind or a stalled server cannot hide the queueing (no coordinated omission).
//
// Failover: an attempt that fails (connect refused, reset, a cut or malformed answer, a
// 5xx answer) or times out is retried once on the next endpoint, keeping its scheduled
// time, with a fresh timeout. An endpoint that refused a connection is skipped for a
// second. A 4xx answer is a failed request (another replica will not help). Requests
// still unanswered when the run ends (after the duration plus two timeouts) count as
// timed out.
#pragma once

#include <atomic>
#include <memory>

#include "bench/load/load_config.h"
#include "bench/load/load_result.h"
#include "bench/protocol/metrics_client.h"

namespace chaosbench::bench::load {

class LoadGenerator {
 public:
  // Resolves the endpoints and builds the requests; throws std::runtime_error when an
  // endpoint's host does not resolve or the configuration is invalid.
  LoadGenerator(LoadConfig config, MetricsClient& metrics);
  ~LoadGenerator();
  LoadGenerator(const LoadGenerator&) = delete;
  LoadGenerator& operator=(const LoadGenerator&) = delete;

  // Runs the scenario (blocking) and returns what it measured.
  LoadResult run();
  // Ends the issuing phase early (any thread, e.g. a signal handler's flag watcher).
  void stop() { stop_.store(true, std::memory_order_relaxed); }

 private:
  struct Loop;
  LoadConfig config_;
  MetricsClient& metrics_;
  std::atomic<bool> stop_{false};
  std::unique_ptr<Loop> loop_;
};

}  // namespace chaosbench::bench::load

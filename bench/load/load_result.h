// What a load run measured: plain values, no live objects. Latencies are measured from each
// request's scheduled send time (see load_generator.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace chaosbench::bench::load {

struct LatencySummary {
  double p50_ms = 0, p90_ms = 0, p99_ms = 0, p999_ms = 0, mean_ms = 0, max_ms = 0;
};

// Percentiles (common/values/percentile.h) of `latencies_ms` (sorted in place); all zero when
// it is empty.
LatencySummary summarize_latencies(std::vector<float>& latencies_ms);

// One 1-second window, counted by completion time.
struct LoadWindow {
  double start_s = 0;  // since the run started
  std::int64_t completed = 0;
  std::int64_t errors = 0;  // failed or timed out after any retry
  LatencySummary latency;
  double throughput() const;  // completed per second
  double error_rate() const;  // errors / (completed + errors), percent
};

// One request, kept when LoadConfig::keep_requests is set.
struct RequestRecord {
  double scheduled_s = 0;  // since the run started
  float latency_ms = 0;    // scheduled time to the end of its last attempt
  bool ok = false;
};

struct LoadResult {
  std::string scenario;
  double target_qps = 0;   // server scenario; 0 otherwise
  double duration_s = 0;   // from the start until the last request finished
  std::int64_t issued = 0;      // requests scheduled (retries not counted again)
  std::int64_t completed = 0;   // answered with a 2xx-4xx status
  std::int64_t errors = 0;      // failed or timed out with no attempt left
  std::int64_t timeouts = 0;    // attempts that timed out (each also an error or a failover)
  std::int64_t failovers = 0;   // attempts retried on the next endpoint
  std::int64_t http_errors = 0; // attempts answered 5xx
  std::int64_t connect_errors = 0;  // attempts lost to refused or reset connections
  LatencySummary latency;           // completed requests
  std::vector<LoadWindow> windows;
  std::vector<RequestRecord> requests;

  double throughput() const;  // completed / duration_s
  double error_rate() const;  // percent of issued
};

}  // namespace chaosbench::bench::load

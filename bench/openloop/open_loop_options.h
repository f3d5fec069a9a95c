// How the open-loop engine (open_loop_engine.h) carries requests: the endpoints and their
// connection pools, timeouts, failover, what a stop does, and the bounds on answers. A
// plain value; each load generator fills it from its own settings.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <limits>
#include <vector>

#include "bench/http/http_client_endpoint.h"
#include "bench/http/http_response_reader.h"

namespace chaosbench::bench::openloop {

struct OpenLoopOptions {
  // Requests go round robin over these, skipping one that refused a connection in the
  // last second (while another is up).
  std::vector<http::HttpClientEndpoint> endpoints;
  // 0: one connection per request in flight, opened as needed and kept alive for reuse
  // (the generator bounds the requests in flight). N > 0: a fixed pool of N per endpoint;
  // a request finding all N busy waits in its endpoint's queue, in order, its timeout
  // running.
  int connections_per_endpoint = 0;
  std::chrono::nanoseconds timeout = std::chrono::seconds(10);
  // true: each attempt has `timeout` from its start (the first attempt's start is the
  // scheduled time), so a failover gets a fresh one. false: the request has `timeout`
  // from its scheduled time in all, and may fail over only before then.
  bool timeout_per_attempt = false;
  // Endpoints a request may try in all, its first included (capped at their number).
  std::size_t max_attempts = std::numeric_limits<std::size_t>::max();
  // After issuing ends, requests still unanswered this much later fail as timeouts.
  std::chrono::nanoseconds drain_limit = std::chrono::nanoseconds::max();
  // Set from any thread (a signal's flag) to stop the run. With `stop_cancels` the
  // requests in flight fail at once as cancelled and run() returns; without, issuing
  // ends and the run drains as at its planned end.
  const std::atomic<bool>* stop = nullptr;
  bool stop_cancels = false;
  http::HttpResponseReader::Limits limits;
};

}  // namespace chaosbench::bench::openloop

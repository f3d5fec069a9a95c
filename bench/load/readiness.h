// Before the load starts: wait until every endpoint answers GET /v2/health/ready with 200
// (KServe v2 readiness; the LLM load generator asks GET /health, then /v1/models), so a
// server still loading its model is not counted as errors. Blocking, one short-lived
// connection per probe, its answer's head read by the HTTP client core's parser (a second
// at most).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "bench/http/http_client_endpoint.h"

namespace chaosbench::bench::load {

// The endpoints still not ready when `limit` passed (empty: all ready). An endpoint is
// ready when one of `paths` answers 200.
std::vector<std::string> wait_until_ready(const std::vector<http::HttpClientEndpoint>& endpoints,
                                          std::chrono::milliseconds limit,
                                          const std::vector<std::string>& paths = {"/v2/health/ready"});

}  // namespace chaosbench::bench::load

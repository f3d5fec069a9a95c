// One blocking HTTP(S) request over libcurl: what probes, scrapes, Prometheus queries and
// Grafana annotations send. Only http:// and https:// URLs are followed (no redirects to
// other schemes, no file:// or the like from a scenario), the body read is bounded, and
// every request has a deadline, so a hostile or dead endpoint costs at most that long.
// A request made while the calling thread is inside a network namespace (common/kernel/netns.h
// in_netns) connects from that namespace: libcurl makes its sockets on the calling thread.
// Threads: http_fetch may be called from any thread at once (one easy handle per call).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace chaosbench::harness::http {

struct Request {
  std::string method = "GET";  // GET or POST (any token libcurl accepts)
  std::string url;             // http:// or https://
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;  // sent when non-empty (or when method is POST)
  std::chrono::milliseconds timeout{2000};  // connect + transfer, whole request
  std::size_t max_body = 16u << 20;         // longer answers fail with an error
};

struct Response {
  int status = 0;      // HTTP status; 0 when no answer came
  std::string body;
  std::string content_type;
  std::string error;   // non-empty: the request failed before a whole answer came
  double elapsed_s = 0;
  bool answered() const { return error.empty(); }
};

// Blocks until the answer, the deadline or a failure; never throws for network errors
// (Response::error says what happened). Throws std::invalid_argument for a URL whose
// scheme is not http or https.
Response fetch(const Request& request);

// Checks a URL's form before anything is sent: an empty string when fine, else why not
// ("the URL must start with http:// or https://").
std::string url_problem(const std::string& url);

}  // namespace chaosbench::harness::http

// What one HttpServerCore listens on and the bounds every connection meets. The KServe
// server takes it as it is (bench/serve/http_server.h), the LLM server extends it
// (bench/llm/serve/llm_http_server.h), the metrics listener fills its own
// (harness/prometheus/metrics_listener.cc).
// A request is read within header_limit (else 431), body_limit (else 413), the
// connection budget's max_buffered body bytes over all connections (else 503) and
// request_timeout from its first byte to its last (else 408); each write of an answer
// within request_timeout (else the connection closes); a keep-alive connection idle past
// idle_timeout closes. Past max_connections a connection is answered 503 and closed while
// fewer than max_refusing such answers are in flight, dropped otherwise.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace chaosbench::bench::http {

struct ServerConfig {
  std::string host = "127.0.0.1";  // numeric address to bind
  unsigned short port = 0;         // 0: an ephemeral port (see HttpServerCore::port())
  int threads = 2;                 // io threads
  std::uint64_t body_limit = 4u << 20;                // larger bodies get 413
  std::size_t header_limit = 8u << 10;                // larger request headers get 431
  std::size_t max_connections = 512;                  // more get 503 and a close
  std::uint64_t max_buffered = 64u << 20;             // request-body bytes over all connections; 503 past it
  std::chrono::milliseconds request_timeout{30'000};  // first byte to last byte of a request; 408 past it
  std::chrono::milliseconds idle_timeout{60'000};     // a keep-alive connection idle this long is closed
  std::size_t max_refusing = 64;  // 503 answers in flight past max_connections (0: drop at once)
  bool no_delay = false;          // TCP_NODELAY on every connection (an answer of many small writes)
  std::string name = "http";      // "<name>: cannot listen on ..." (empty: no prefix)
};

}  // namespace chaosbench::bench::http

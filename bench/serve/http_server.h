// HTTP/1.1 transport for an InferenceService: the KServe routes as a handler on the
// shared server core (bench/http/http_server_core.h: keep-alive connections, one strand
// per connection, an io_context run by a small thread pool; Boost.Beast is compiled there,
// not here). Hostile clients meet bounds (docs in README, `worker serve --help`): at most
// max_connections open (503 past it), header_limit and body_limit per request (431,
// 413), max_buffered body bytes over all connections (503), request_timeout from a
// request's first byte to its last (408); out of descriptors, accepting pauses.
// Threads: construct, port() and stop() from one owner thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "bench/serve/inference_service.h"

namespace chaosbench::bench::serve {

struct HttpServerConfig {
  std::string host = "127.0.0.1";  // numeric address to bind
  unsigned short port = 0;         // 0: an ephemeral port (see port())
  int threads = 2;                 // io threads
  std::uint64_t body_limit = 4u << 20;           // larger bodies get 413
  std::size_t header_limit = 8u << 10;            // larger request headers get 431
  std::size_t max_connections = 512;              // more get 503 and a close
  std::uint64_t max_buffered = 64u << 20;         // request-body bytes over all connections; 503 past it
  std::chrono::milliseconds request_timeout{30'000};  // first byte to last byte of a request; 408 past it
  std::chrono::seconds idle_timeout{60};          // a keep-alive connection idle this long is closed
};

class HttpServer {
 public:
  // Binds and listens (throws std::runtime_error when it cannot), then starts the threads.
  HttpServer(HttpServerConfig cfg, InferenceService& service);
  ~HttpServer();  // stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  unsigned short port() const;  // the bound port
  // Graceful: stops accepting, lets the service answer what it has queued (service.stop()),
  // then stops the io threads. Idempotent.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace chaosbench::bench::serve

// HTTP/1.1 transport for an InferenceService: the KServe routes as a handler on the
// shared server core (bench/http/http_server_core.h: keep-alive connections, one strand
// per connection, an io_context run by a small thread pool; Boost.Beast is compiled there,
// not here). Hostile clients meet bounds (docs in README, `worker serve --help`): at most
// max_connections open (503 past it), header_limit and body_limit per request (431,
// 413), max_buffered body bytes over all connections (503), request_timeout from a
// request's first byte to its last (408); out of descriptors, accepting pauses.
// Threads: construct, port() and stop() from one owner thread.
#pragma once

#include <memory>

#include "bench/http/server_config.h"
#include "bench/serve/inference_service.h"

namespace chaosbench::bench::serve {

// The core's settings as they are (bench/http/server_config.h: host, port, threads,
// body_limit, header_limit, max_connections, max_buffered, request_timeout, idle_timeout);
// the server names itself "serve" in its errors.
using HttpServerConfig = http::ServerConfig;

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

// HTTP/1.1 transport for an InferenceService on Boost.Beast: keep-alive connections, one
// strand per connection, an io_context run by a small thread pool. Beast is included only
// in http_server.cc (it compiles slowly); this header shows none of it.
// Threads: construct, port() and stop() from one owner thread.
#pragma once

#include <chrono>
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

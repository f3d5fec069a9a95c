// A server's protocol on the core (KServe routes and JSON, OpenAI routes and SSE, /metrics):
// what to answer to each request the core has read, and how to word the errors the core
// itself decides (400 unparsable, 408 too slow, 413 body too large, 431 header too large,
// 503 over the connection or buffer budget).
// Threads: both are called on the connection's strand (an io thread of the core); a
// handler serves many connections at once, so what it shares between them must be
// thread-safe. Neither may block: a slow answer is given later through the exchange.
#pragma once

#include <string>

#include "bench/http/server_exchange.h"
#include "bench/http/server_request.h"
#include "bench/http/server_response.h"

namespace chaosbench::bench::http {

class ServerHandler {
 public:
  virtual ~ServerHandler() = default;
  // Answers `request` through `exchange`, now or later from any thread (exactly one
  // answer: respond(), or begin_stream() ... end_stream()). An exception thrown here is
  // answered 500.
  virtual void handle(ServerRequest request, const ServerExchange& exchange) = 0;
  // The body of an error the core decides; the core closes the connection after it.
  virtual ServerResponse transport_error(int status, const std::string& message) = 0;
};

}  // namespace chaosbench::bench::http

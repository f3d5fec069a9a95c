// The HTTP/1.1 server core the three servers share (the KServe server, bench/serve/
// http_server.h; the OpenAI-compatible one, bench/llm/serve/llm_http_server.h; `run
// --metrics-listen`, harness/prometheus/metrics_listener.h): an io_context run by a few
// threads, the accept loop (accept_loop.h: the connection budget, 503 past it, a pause
// instead of a spin when descriptors run out) and one ServerSession per connection, which
// reads each request within the ServerConfig's bounds and hands it to the server's
// ServerHandler, whose answer it writes, whole or streamed, keep-alive. The server's
// protocol is all in its handler; Boost.Beast is compiled here alone
// (beast_request_parser.cc), and this header shows no Beast and no Asio.
// Threads: construct, start(), stop_accepting(), stop() and port() from one owner thread.
#pragma once

#include <memory>

#include "bench/http/server_config.h"
#include "bench/http/server_handler.h"

namespace boost::asio {
class io_context;
}

namespace chaosbench::bench::http {

class HttpServerCore {
 public:
  // Binds nothing yet; `handler` must outlive the core.
  HttpServerCore(ServerConfig cfg, ServerHandler& handler);
  ~HttpServerCore();  // stop()
  HttpServerCore(const HttpServerCore&) = delete;
  HttpServerCore& operator=(const HttpServerCore&) = delete;

  // What the io threads run: a handler's own timers may live on it.
  boost::asio::io_context& io_context();
  // Binds and listens (throws std::runtime_error "<name>: cannot listen on HOST:PORT: why"
  // or "<name>: bad --host ..."), then starts the io threads. Returns the bound port.
  unsigned short start();
  unsigned short port() const;  // 0 before start()
  const ServerConfig& config() const;
  // Stops accepting; connections go on while the io threads run. Idempotent.
  void stop_accepting();
  // stop_accepting(), then stops the io threads and joins them: answers in progress are
  // cut, and no handler of the core runs afterwards. Idempotent.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace chaosbench::bench::http

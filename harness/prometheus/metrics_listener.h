// The HTTP end of `run --metrics-listen`: one thread serving GET /metrics with whatever
// the render callback returns (Content-Type text/plain; version=0.0.4), 404 for any
// other path, 405 for other methods, 400 for what does not parse. A handler on the HTTP
// server core the workloads' servers share (bench/http/http_server_core.h). Bounded:
// requests of at most 8 KiB of headers and no body (else 400), at most 32 connections
// (more are closed at once), a request whole within 10 s of its first byte (else 408), and
// a keep-alive connection idle for 10 s is closed.
// Threads: construct, port() and stop() from one owner thread. `render` runs on the
// listener's thread, once per scrape and never otherwise; it must be thread-safe
// against the owner's writers and must not call stop().
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "harness/prometheus/listen_address.h"

namespace chaosbench::harness::prometheus {

class MetricsListener {
 public:
  using Render = std::function<std::string()>;

  // Binds and listens on `address` (throws std::runtime_error when it cannot: a port in
  // use, an address this host lacks), then starts the thread.
  MetricsListener(const ListenAddress& address, Render render);
  ~MetricsListener();  // stop()
  MetricsListener(const MetricsListener&) = delete;
  MetricsListener& operator=(const MetricsListener&) = delete;

  unsigned short port() const;  // the bound port (the one chosen, for port 0)
  std::string address() const;  // "127.0.0.1:9464"
  // Closes the listening socket and every connection (a scrape in flight is cut) and
  // joins the thread. Idempotent.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace chaosbench::harness::prometheus

// The listener (metrics_listener.h): /metrics as a handler on the HTTP server core
// (bench/http/http_server_core.h), one io thread.
#include "harness/prometheus/metrics_listener.h"

#include <spdlog/spdlog.h>

#include "bench/http/http_server_core.h"

namespace chaosbench::harness::prometheus {
namespace {

namespace core = bench::http;  // not "http": harness/http is chaosbench::harness::http

constexpr const char* kExpositionType = "text/plain; version=0.0.4; charset=utf-8";
constexpr const char* kListenerTextType = "text/plain; charset=utf-8";

core::ServerConfig listener_config(const ListenAddress& address) {
  core::ServerConfig cfg;
  cfg.name = "";  // errors read "cannot listen on ADDR:PORT: why"
  cfg.host = address.host;
  cfg.port = address.port;
  cfg.threads = 1;
  cfg.body_limit = 0;  // a scrape has no body
  cfg.header_limit = 8u << 10;
  cfg.max_connections = 32;
  cfg.max_refusing = 0;  // past 32, closed at once
  cfg.request_timeout = std::chrono::seconds(10);
  cfg.idle_timeout = std::chrono::seconds(10);
  return cfg;
}

core::ServerResponse listener_text(int status, std::string body, bool close = false) {
  core::ServerResponse r(status, kListenerTextType, std::move(body));
  r.close = close;
  return r;
}

}  // namespace

struct MetricsListener::Impl final : core::ServerHandler {
  Impl(const ListenAddress& address, Render r) : render(std::move(r)), server(listener_config(address), *this) {}

  void handle(core::ServerRequest request, const core::ServerExchange& exchange) override {
    const std::string_view target = request.target;
    if (target.substr(0, target.find('?')) != "/metrics")
      return exchange.respond(listener_text(404, "not found; try /metrics\n"));
    if (request.method != "GET") {
      auto r = listener_text(405, "only GET\n");
      r.headers = "Allow: GET\r\n";
      return exchange.respond(std::move(r));
    }
    std::string body;
    try {
      body = render();
    } catch (const std::exception& e) {
      spdlog::warn("--metrics-listen: rendering the exposition failed: {}", e.what());
      return exchange.respond(listener_text(500, "rendering failed\n", true));
    }
    exchange.respond({200, kExpositionType, std::move(body)});
  }

  // What does not parse, a body (none is taken) and headers over the bound are all 400.
  core::ServerResponse transport_error(int status, const std::string&) override {
    if (status == 408) return listener_text(408, "request timeout\n");
    if (status >= 500) return listener_text(status, "unavailable\n");
    return listener_text(400, "bad request\n");
  }

  // Destroyed in reverse: the server (its thread and connections) before the callback.
  Render render;
  core::HttpServerCore server;
  std::string address;
};

MetricsListener::MetricsListener(const ListenAddress& address, Render render)
    : impl_(std::make_unique<Impl>(address, std::move(render))) {
  const unsigned short port = impl_->server.start();  // throws "cannot listen on ...: why"
  impl_->address = ListenAddress{address.host, port}.to_string();
}

MetricsListener::~MetricsListener() { stop(); }

unsigned short MetricsListener::port() const { return impl_->server.port(); }

std::string MetricsListener::address() const { return impl_->address; }

void MetricsListener::stop() { impl_->server.stop(); }

}  // namespace chaosbench::harness::prometheus

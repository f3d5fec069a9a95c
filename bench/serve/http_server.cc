// The KServe protocol on the HTTP server core (bench/http/http_server_core.h): each request
// the core reads goes to the InferenceService, whose reply (at once, or from the batching
// thread) the core writes; the errors the core decides are worded and counted by the
// service.
#include "bench/serve/http_server.h"

#include <utility>

#include "bench/http/http_server_core.h"

namespace chaosbench::bench::serve {
namespace {

http::ServerConfig kserve_core_config(HttpServerConfig cfg) {
  cfg.name = "serve";
  return cfg;
}

http::ServerResponse kserve_response(HttpResponse r) {
  return {r.status, std::move(r.content_type), std::move(r.body)};
}

}  // namespace

struct HttpServer::Impl final : http::ServerHandler {
  Impl(HttpServerConfig cfg, InferenceService& s) : service(s), core(kserve_core_config(std::move(cfg)), *this) {}

  void handle(http::ServerRequest request, const http::ServerExchange& exchange) override {
    service.handle({std::move(request.method), std::move(request.target), std::move(request.body)},
                   [exchange](HttpResponse response) { exchange.respond(kserve_response(std::move(response))); });
  }

  http::ServerResponse transport_error(int status, const std::string& message) override {
    return kserve_response(service.transport_error(status, message));
  }

  InferenceService& service;
  http::HttpServerCore core;
  bool stopped = false;
};

HttpServer::HttpServer(HttpServerConfig cfg, InferenceService& service)
    : impl_(std::make_unique<Impl>(std::move(cfg), service)) {
  impl_->core.start();
}

HttpServer::~HttpServer() { stop(); }

unsigned short HttpServer::port() const { return impl_->core.port(); }

void HttpServer::stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  impl_->core.stop_accepting();
  impl_->service.stop();  // queued requests are answered while the io threads still run
  impl_->core.stop();
}

}  // namespace chaosbench::bench::serve

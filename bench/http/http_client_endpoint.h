// An HTTP server as a client names it: "http://host:port" parsed into host and port, and
// resolved to the socket address a connection dials. Shared by both load generators (the
// KServe one and the LLM one) and their readiness wait; a plain value.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace chaosbench::bench::http {

struct HttpClientEndpoint {
  // A resolved socket address: what connect(2) takes.
  struct Address {
    sockaddr_storage storage{};
    socklen_t length = 0;
    const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage); }
  };

  std::string host;
  std::uint16_t port = 80;

  // "host:port": the Host header, and how messages name the endpoint.
  std::string text() const { return host + ":" + std::to_string(port); }
  // The first address getaddrinfo gives (blocking: call before the clock starts). Throws
  // std::runtime_error "cannot resolve host:port: why".
  Address resolve() const;
};

// "http://host[:port][/]" (port 80 when left out; a path is refused): the endpoint, or
// std::nullopt with `error` saying why not.
std::optional<HttpClientEndpoint> parse_http_endpoint(std::string_view url, std::string& error);
// "http://a:1,http://b:2" (the workers' --endpoints; empty items skipped): the endpoints,
// or std::nullopt with `error` saying why (also for none at all).
std::optional<std::vector<HttpClientEndpoint>> parse_http_endpoint_list(std::string_view list, std::string& error);

}  // namespace chaosbench::bench::http

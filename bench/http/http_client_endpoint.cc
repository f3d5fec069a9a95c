#include "bench/http/http_client_endpoint.h"

#include <netdb.h>

#include <charconv>
#include <cstring>
#include <stdexcept>

namespace chaosbench::bench::http {

HttpClientEndpoint::Address HttpClientEndpoint::resolve() const {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
  if (rc != 0 || found == nullptr)
    throw std::runtime_error("cannot resolve " + text() + ": " + (rc != 0 ? ::gai_strerror(rc) : "no address"));
  Address address;
  std::memcpy(&address.storage, found->ai_addr, found->ai_addrlen);
  address.length = found->ai_addrlen;
  ::freeaddrinfo(found);
  return address;
}

std::optional<HttpClientEndpoint> parse_http_endpoint(std::string_view url, std::string& error) {
  constexpr std::string_view kScheme = "http://";
  if (url.substr(0, kScheme.size()) != kScheme) {
    error = "expected http://host[:port], got \"" + std::string(url) + "\"";
    return std::nullopt;
  }
  auto rest = url.substr(kScheme.size());
  if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  if (rest.find('/') != std::string_view::npos) {
    error = "an endpoint has no path (the request path is --path), got \"" + std::string(url) + "\"";
    return std::nullopt;
  }
  HttpClientEndpoint endpoint;
  const auto colon = rest.rfind(':');
  endpoint.host = std::string(rest.substr(0, colon));
  if (colon != std::string_view::npos) {
    const auto port_text = rest.substr(colon + 1);
    unsigned port = 0;
    auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc() || end != port_text.data() + port_text.size() || port == 0 || port > 65535) {
      error = "bad port in \"" + std::string(url) + "\"";
      return std::nullopt;
    }
    endpoint.port = static_cast<std::uint16_t>(port);
  }
  if (endpoint.host.empty()) {
    error = "no host in \"" + std::string(url) + "\"";
    return std::nullopt;
  }
  return endpoint;
}

std::optional<std::vector<HttpClientEndpoint>> parse_http_endpoint_list(std::string_view list, std::string& error) {
  std::vector<HttpClientEndpoint> out;
  while (!list.empty()) {
    const auto comma = list.find(',');
    const auto item = list.substr(0, comma);
    list.remove_prefix(comma == std::string_view::npos ? list.size() : comma + 1);
    if (item.empty()) continue;
    auto endpoint = parse_http_endpoint(item, error);
    if (!endpoint) return std::nullopt;
    out.push_back(*endpoint);
  }
  if (out.empty()) {
    error = "expected comma-separated http://host:port";
    return std::nullopt;
  }
  return out;
}

}  // namespace chaosbench::bench::http

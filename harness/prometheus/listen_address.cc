// Parsing ADDR:PORT (listen_address.h).
#include "harness/prometheus/listen_address.h"

#include <arpa/inet.h>

#include <charconv>
#include <fmt/format.h>
#include <stdexcept>

namespace chaosbench::harness::prometheus {
namespace {

bool numeric_address(const std::string& host, int family) {
  unsigned char buf[sizeof(in6_addr)];
  return inet_pton(family, host.c_str(), buf) == 1;
}

[[noreturn]] void bad(const std::string& text, std::string_view why) {
  throw std::invalid_argument(fmt::format("bad listen address \"{}\": {} (expected ADDR:PORT such as "
                                          "127.0.0.1:9464, [::1]:9464, localhost:9464 or :9464)",
                                          text, why));
}

}  // namespace

std::string ListenAddress::to_string() const {
  return host.find(':') != std::string::npos ? fmt::format("[{}]:{}", host, port) : fmt::format("{}:{}", host, port);
}

ListenAddress parse_listen_address(const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos) bad(text, "no port");
  ListenAddress out;
  const std::string port = text.substr(colon + 1);
  unsigned value = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value > 65535)
    bad(text, "the port must be a number from 0 to 65535");
  out.port = static_cast<unsigned short>(value);
  std::string host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
    if (!numeric_address(host, AF_INET6)) bad(text, "not a numeric IPv6 address");
  } else if (host.empty()) {
    host = "0.0.0.0";
  } else if (host == "localhost") {
    host = "127.0.0.1";
  } else if (!numeric_address(host, AF_INET)) {
    bad(text, "the address must be a numeric IPv4 address, [IPv6], localhost or empty");
  }
  out.host = std::move(host);
  return out;
}

}  // namespace chaosbench::harness::prometheus

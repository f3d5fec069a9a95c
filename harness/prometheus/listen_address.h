// The ADDR:PORT of `run --metrics-listen`, checked before a run starts so a typo is a
// usage error (exit 2) and not a failed run.
#pragma once

#include <string>

namespace chaosbench::harness::prometheus {

struct ListenAddress {
  std::string host;  // numeric: "127.0.0.1", "0.0.0.0", "::1"
  unsigned short port = 0;  // 0: any free port (the listener says which)
  std::string to_string() const;  // "127.0.0.1:9464", "[::1]:9464"
};

// Accepts "IPV4:PORT", "[IPV6]:PORT", "localhost:PORT" (127.0.0.1) and ":PORT" (every
// IPv4 interface, 0.0.0.0). PORT is 0..65535. Throws std::invalid_argument saying what is
// wrong and what is expected.
ListenAddress parse_listen_address(const std::string& text);

}  // namespace chaosbench::harness::prometheus

// One request as the server core read it (bench/http/server_session.h), whole, handed to
// the server's ServerHandler. Plain values: no Boost.Beast type leaves the core.
#pragma once

#include <string>

namespace chaosbench::bench::http {

struct ServerRequest {
  std::string method;  // as sent: "GET", "POST", "BREW"
  std::string target;  // "/v2/models/mlp/infer?x=1"
  std::string body;
  unsigned version = 11;   // 10 or 11 (HTTP/1.0, HTTP/1.1)
  bool keep_alive = true;  // the client allows another request on this connection
};

}  // namespace chaosbench::bench::http

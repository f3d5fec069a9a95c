// A whole answer a ServerHandler gives the core (ServerExchange::respond): status, type,
// body. The core frames it (status line, Server, Content-Type, Content-Length, Connection)
// in the request's HTTP version.
#pragma once

#include <string>
#include <utility>

namespace chaosbench::bench::http {

struct ServerResponse {
  ServerResponse() = default;
  ServerResponse(int s, std::string type, std::string text)
      : status(s), content_type(std::move(type)), body(std::move(text)) {}

  int status = 200;
  std::string content_type = "text/plain";
  std::string body;
  // Extra header lines, each "Name: value\r\n" (e.g. "Allow: GET\r\n"): the handler's
  // own text, never a client's.
  std::string headers;
  bool close = false;  // close the connection after this answer, whatever the request asked
};

}  // namespace chaosbench::bench::http

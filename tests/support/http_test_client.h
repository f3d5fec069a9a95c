// A small blocking HTTP/1.1 client for tests that talk to a server byte by byte: fresh
// connections with timeouts, whole writes, one response read by Content-Length.
// Threads: free functions, safe from any thread; each call blocks up to the socket's
// timeouts.
#pragma once

#include <chrono>
#include <string>

namespace chaosbench::test {

struct HttpReply {
  int status = 0;     // 0: closed (or timed out) before a whole response
  std::string body;
  bool closed = false;  // the server closed the connection after this reply
};

// A connected TCP socket to 127.0.0.1:port with SO_RCVTIMEO/SO_SNDTIMEO of `timeout`; -1
// on failure.
int connect_local(unsigned short port, std::chrono::milliseconds timeout = std::chrono::seconds(5));
// Writes all of `bytes` (false when the peer closed or the timeout hit first).
bool send_all(int fd, const std::string& bytes);
// Reads one response (by Content-Length) from `fd`; `pending` keeps bytes past it.
HttpReply read_reply(int fd, std::string& pending);
// Reads until EOF or the timeout: true on EOF (the server closed).
bool wait_closed(int fd);
// One request on a fresh connection; the connection is closed afterwards.
HttpReply http_request(unsigned short port, const std::string& method, const std::string& target,
                       const std::string& body = "");
std::string request_text(const std::string& method, const std::string& target, const std::string& body);

}  // namespace chaosbench::test

// What an HttpClientConnection (http_client_connection.h) tells the one who sent a request
// about its answer, as the bytes arrive: the request is out, the first byte came, the
// head parsed, each piece of the body. Each call carries the time the read that brought it
// returned (taken before any parsing), so a streamed answer is timed event by event.
// A sink may end the exchange early (a failed status, an error event) by returning false;
// the connection then closes, since the rest of the answer will not be read.
// Calls come on the connection's thread, never after the exchange ended.
#pragma once

#include <chrono>
#include <string_view>

namespace chaosbench::bench::http {

class HttpResponseReader;

class HttpResponseSink {
 public:
  using Clock = std::chrono::steady_clock;

  virtual ~HttpResponseSink() = default;

  // The whole request was written at `at`.
  virtual void on_sent(Clock::time_point at) { (void)at; }
  // The first byte of the answer arrived at `at`.
  virtual void on_first_byte(Clock::time_point at) { (void)at; }
  // The head is parsed: `response` holds its status and headers. False ends the exchange.
  virtual bool on_head(const HttpResponseReader& response, Clock::time_point at) {
    (void)response, (void)at;
    return true;
  }
  // The next piece of the decoded body; it views the connection's read buffer, valid
  // during the call only. False ends the exchange.
  virtual bool on_body(std::string_view piece, Clock::time_point at) {
    (void)piece, (void)at;
    return true;
  }
};

}  // namespace chaosbench::bench::http

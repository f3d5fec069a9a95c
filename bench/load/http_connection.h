// One non-blocking HTTP/1.1 keep-alive connection of the load generator, registered with
// the generator's epoll set (level-triggered; the epoll data is the connection's id). It
// carries at most one request at a time; the request bytes are owned by the caller and
// must outlive it.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <string>

#include "bench/load/http_response_parser.h"

namespace chaosbench::bench::load {

class HttpConnection {
 public:
  enum class Event { kNone, kResponse, kFailed };

  HttpConnection(int epoll_fd, std::uint32_t id);
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  bool open() const { return fd_ >= 0; }
  bool busy() const { return request_ != nullptr; }
  // After kFailed: the server closed a reused keep-alive socket before sending a byte of
  // the answer (an idle-connection close racing the request), so resending is safe.
  bool failed_stale() const { return failed_stale_; }

  // Sends `request`, connecting to `address` first when closed. False when it failed at
  // once (the connection is then closed and idle).
  bool start(const std::string& request, const sockaddr* address, socklen_t length);
  // Handles epoll `events`. kResponse: status() holds the answer, the connection is idle
  // (closed when the server asked). kFailed: the request is lost, the connection closed.
  Event on_ready(std::uint32_t events);
  int status() const { return parser_.status(); }
  void close();

 private:
  bool write_some();  // false on error
  void watch_writes(bool on);

  int epoll_fd_;
  std::uint32_t id_;
  int fd_ = -1;
  bool connecting_ = false;
  bool watching_writes_ = false;
  int served_ = 0;  // answers on the current socket
  bool failed_stale_ = false;
  const std::string* request_ = nullptr;
  std::size_t written_ = 0;
  std::string in_;
  HttpResponseParser parser_;
};

}  // namespace chaosbench::bench::load

// One non-blocking TCP connection of the LLM load generator, carrying one request (one
// stream) at a time and kept alive between requests when the server allows. Registered
// with the generator's epoll set, level-triggered, with its id as the epoll data. It sends
// the request bytes, then hands every read to the request's LlmStreamReader with the time
// the read returned, so timestamps are taken as bytes arrive.
// Threads: the generator's loop thread only. No call blocks.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "bench/llm/stream/llm_stream_reader.h"

namespace chaosbench::bench::llm {

class LlmConnection {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Event {
    kNone,      // still going
    kEnded,     // the reader ended (completed or failed); the connection is idle
    kNoAnswer,  // connect failed or the peer closed before any answer byte; idle, closed
  };

  LlmConnection(int epoll_fd, std::uint32_t id);
  ~LlmConnection();
  LlmConnection(const LlmConnection&) = delete;
  LlmConnection& operator=(const LlmConnection&) = delete;

  bool open() const { return fd_ >= 0; }
  bool busy() const { return reader_ != nullptr; }
  bool connecting() const { return connecting_; }
  // Whether the socket was open before this request (kept alive, or opened in advance): a
  // kNoAnswer then is the server closing an idle socket as the request went out, safe to
  // resend.
  bool reused() const { return reused_; }

  // Opens the socket in advance, with no request (the generator's warm-up, so the first
  // requests' latencies do not include the handshake). False when that failed at once.
  bool preconnect(const sockaddr* address, socklen_t length);
  std::uint32_t id() const { return id_; }

  // Sends `request`, connecting to `address` first when closed. False when that failed at
  // once (the connection is then closed and idle, the reader handed back by take()).
  bool start(std::string request, const sockaddr* address, socklen_t length, std::unique_ptr<LlmStreamReader> reader);
  // Handles epoll `events` (reads once; level-triggered epoll calls again for the rest).
  Event on_ready(std::uint32_t events, char* buffer, std::size_t size);
  LlmStreamReader& reader() { return *reader_; }
  // Takes the request's reader back, leaving the connection idle; closes the socket unless
  // the answer left it reusable.
  std::unique_ptr<LlmStreamReader> take();
  void close();

 private:
  bool connect_to(const sockaddr* address, socklen_t length);
  bool connect_ended(std::uint32_t events);
  bool write_some(Clock::time_point now);  // false on a socket error
  void watch_writes(bool on);

  int epoll_fd_;
  std::uint32_t id_;
  int fd_ = -1;
  bool connecting_ = false;
  bool watching_writes_ = false;
  bool reused_ = false;
  int answered_ = 0;  // answers on the current socket
  std::string request_;
  std::size_t written_ = 0;
  std::unique_ptr<LlmStreamReader> reader_;
};

}  // namespace chaosbench::bench::llm

// One end of the controller-agent link: a connected TCP socket carrying frames
// (link_frame.h). Sends are whole frames, serialised by a mutex, so two threads (the
// agent's loop and its records forwarder) never interleave bytes; a send blocks until
// the kernel took the frame, at most the socket's send timeout. Receives never block the
// socket: pump() reads what is there, next() hands out whole frames, and receive() waits
// in poll(2) for one. A link is broken for good once the peer closes, a frame is
// malformed or a send fails: every later send throws LinkError, and error() says why.
// Threads: send(), close(), broken() and error() from any thread; pump, next and receive
// from one (the reader's).
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "common/files/unique_fd.h"
#include "harness/agent/link_frame.h"

namespace chaosbench::harness {

class LinkError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class LinkChannel {
 public:
  // Takes a connected stream socket. Sets TCP_NODELAY (a command is one small frame that
  // must leave at once) and a send timeout of `send_timeout`, so a peer that stops
  // reading cannot hold a sender for ever.
  explicit LinkChannel(common::UniqueFd fd, std::chrono::milliseconds send_timeout = std::chrono::seconds(5));

  int fd() const { return fd_.get(); }
  // Throws LinkError when the link is (or becomes) broken.
  void send(MessageType type, std::string_view payload);

  // Reads what the socket holds now, without blocking. False once the link is broken
  // (the peer closed, a read failed, a frame was malformed); frames already read stay
  // available from next().
  bool pump();
  std::optional<Frame> next();
  // Waits up to `timeout` for a whole frame. nullopt on timeout; throws LinkError when
  // the link broke before one came.
  std::optional<Frame> receive(std::chrono::milliseconds timeout);

  bool broken() const { return broken_.load(); }
  // Why the link broke ("" while it is whole). Any thread.
  std::string error() const;
  // Marks the link broken with `why` (the first reason is kept) and shuts the socket
  // down both ways, which wakes a peer blocked on it.
  void close(const std::string& why);

 private:
  common::UniqueFd fd_;
  FrameReader reader_;
  mutable std::mutex send_mutex_;  // also guards error_
  std::string error_;
  std::atomic<bool> broken_{false};
};

// Connects to IPv4 `address`:`port` within `timeout`. Throws LinkError naming the
// address and the reason (refused, unreachable, timed out).
common::UniqueFd dial_link(const std::string& address, int port, std::chrono::milliseconds timeout);

}  // namespace chaosbench::harness

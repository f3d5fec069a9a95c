// The handler's end of one request's answer: a copyable handle on its connection
// (ServerSession) through which the answer goes out whole (respond) or streamed (a head,
// then one HTTP chunk per stream() as it comes, then end_stream; on HTTP/1.0 the raw bytes,
// ended by closing the connection), and through which a handler learns how its answer
// ended: written in full, or its client left first (on_finished: a generation to cancel).
// Threads: every member is safe from any thread. Each call takes effect on the
// connection's strand: at once when made there, else posted, so the calls made from one
// thread take effect in their order. A call for an answer that is over (answered in full,
// or its connection closed) does nothing. A copy keeps the connection's object alive, not
// its socket: a connection the core closed stays closed.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "bench/http/server_response.h"

namespace chaosbench::bench::http {

class ServerSession;

class ServerExchange {
 public:
  ServerExchange(std::shared_ptr<ServerSession> session, std::uint64_t answer)
      : session_(std::move(session)), answer_(answer) {}

  // The whole answer.
  void respond(ServerResponse response) const;
  // A streamed answer: its head (Transfer-Encoding: chunked, Cache-Control: no-cache),
  // then data as it comes (empty data is skipped: it would end the body), then the last
  // data and the end of the body.
  void begin_stream(int status, std::string content_type) const;
  void stream(std::string data) const;
  void end_stream(std::string data = {}) const;
  // `finished` runs once on the strand when the answer ends: delivered true once its last
  // byte is written, false when the client closed, reset or stopped reading (a write past
  // the request timeout) first, and the connection then closes. With none, an answer still
  // goes out to a client that closed its sending side. Never runs after the core stopped.
  void on_finished(std::function<void(bool delivered)> finished) const;
  // Runs `fn` on the connection's strand (whether or not the answer is still current),
  // unless the server has stopped: the way onto the strand for a handler's own state.
  void post(std::function<void()> fn) const;

 private:
  std::shared_ptr<ServerSession> session_;
  std::uint64_t answer_;
};

}  // namespace chaosbench::bench::http

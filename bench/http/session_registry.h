// The live sessions of one HttpServerCore, so that stop() can close every connection and
// drop what their handlers left with them (a streamed answer's state holds its connection
// while the connection holds the answer's end callback: a cycle only an end or a stop
// breaks).
// Threads: every member is safe from any thread; a short mutex, never held while calling
// into a session.
#pragma once

#include <memory>
#include <mutex>
#include <unordered_set>
#include <vector>

namespace chaosbench::bench::http {

class ServerSession;

class SessionRegistry {
 public:
  void add(ServerSession* session);
  void remove(ServerSession* session);
  // Those alive now, held so they stay alive while the caller uses them (one that is
  // being destroyed is skipped).
  std::vector<std::shared_ptr<ServerSession>> live();

 private:
  std::mutex mu_;
  std::unordered_set<ServerSession*> sessions_;
};

}  // namespace chaosbench::bench::http

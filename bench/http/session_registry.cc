// SessionRegistry. See the header.
#include "bench/http/session_registry.h"

#include "bench/http/server_session.h"

namespace chaosbench::bench::http {

void SessionRegistry::add(ServerSession* session) {
  std::lock_guard lock(mu_);
  sessions_.insert(session);
}

void SessionRegistry::remove(ServerSession* session) {
  std::lock_guard lock(mu_);
  sessions_.erase(session);
}

std::vector<std::shared_ptr<ServerSession>> SessionRegistry::live() {
  std::vector<std::shared_ptr<ServerSession>> out;
  std::lock_guard lock(mu_);
  for (ServerSession* s : sessions_)
    if (auto held = s->weak_from_this().lock()) out.push_back(std::move(held));
  return out;
}

}  // namespace chaosbench::bench::http

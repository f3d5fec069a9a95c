// Agents joining the hub (agent_hub.h, accept_all): one thread per handshake, so that no
// peer, however slow or silent, holds up the others; joined agents are pinged while the
// rest log in.
#include <cerrno>
#include <fmt/format.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <thread>

#include "harness/agent/agent_hub.h"

namespace chaosbench::harness {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

namespace {

// After the first launcher failure, the others get this long to join or fail too, so one
// error message names every host that cannot join, not only the first.
constexpr milliseconds kSettleAfterFailure{3000};
constexpr milliseconds kHandshake{5000};
// Connections shaking hands at once; more are closed at once (nobody honest opens them).
constexpr std::size_t kMaxPending = 512;

}  // namespace

struct AgentHub::PendingJoin {
  std::unique_ptr<LinkChannel> link;
  std::thread thread;
  std::atomic<bool> done{false};
  AgentHello hello;
  bool ok = false;  // set before done
};

// Takes every connection waiting on the listener and starts its handshake.
void AgentHub::accept_into(std::vector<std::shared_ptr<PendingJoin>>& pending) {
  for (;;) {
    common::UniqueFd fd(::accept4(listen_fd_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!fd) return;
    if (pending.size() >= kMaxPending) continue;  // closed by fd's destructor
    auto p = std::make_shared<PendingJoin>();
    p->link = std::make_unique<LinkChannel>(std::move(fd));
    PendingJoin* raw = p.get();
    p->thread = std::thread([this, raw] {
      try {
        raw->hello = controller_handshake(*raw->link, secret_, run_id_, CHAOSBENCH_VERSION, nodes_, kHandshake);
        raw->ok = true;
      } catch (const std::exception& e) {
        spdlog::warn("an agent link was refused: {}", e.what());
      }
      raw->done = true;
    });
    pending.push_back(std::move(p));
  }
}

// A finished handshake's agent takes its node's place, unless one is there already.
bool AgentHub::install(PendingJoin& p) {
  if (!p.ok) return false;
  auto& slot = agents_[static_cast<std::size_t>(p.hello.node)];
  if (slot) {
    spdlog::warn("a second agent for node {} ({}) was turned away", p.hello.node, p.hello.host);
    p.link->close("a second agent for the node");
    return false;
  }
  slot = std::make_unique<Agent>();
  slot->link = std::move(p.link);
  slot->hello = std::move(p.hello);
  return true;
}

void AgentHub::accept_all(milliseconds timeout, const std::function<std::map<int, std::string>()>& failures) {
  auto deadline = Clock::now() + timeout;
  auto next_ping = Clock::now() + ping_every_;
  std::map<int, std::string> why_not;
  std::vector<std::shared_ptr<PendingJoin>> pending;
  auto waiting = [&] {
    int n = 0;
    for (int node = 0; node < nodes_; ++node) n += agents_[static_cast<std::size_t>(node)] || why_not.count(node) ? 0 : 1;
    return n;
  };
  while (waiting() > 0 && Clock::now() < deadline) {
    for (auto& [node, why] : failures())
      if (node >= 0 && node < nodes_ && !agents_[static_cast<std::size_t>(node)] && !why_not.count(node)) {
        why_not[node] = std::move(why);
        deadline = std::min(deadline, Clock::now() + kSettleAfterFailure);
      }
    pollfd p{listen_fd_.get(), POLLIN, 0};
    if (::poll(&p, 1, 20) > 0) accept_into(pending);
    for (auto it = pending.begin(); it != pending.end();) {
      if (!(*it)->done) {
        ++it;
        continue;
      }
      (*it)->thread.join();
      install(**it);
      it = pending.erase(it);
    }
    if (Clock::now() >= next_ping) {  // the joined agents' dead-man switches hear from us
      ping_all();
      next_ping = Clock::now() + ping_every_;
    }
  }
  // No more joins: the handshakes still going are cut short, the listener closes.
  for (auto& p : pending) {
    if (p->link) p->link->close("the run stopped accepting agents");
    p->thread.join();
  }
  listen_fd_.reset();
  int missing = 0;
  std::string text;
  for (int node = 0; node < nodes_; ++node) {
    if (agents_[static_cast<std::size_t>(node)]) continue;
    ++missing;
    auto it = why_not.find(node);
    text += fmt::format("\n  node {}: {}", node,
                        it != why_not.end() ? it->second
                        : why_not.empty()   ? fmt::format("no agent dialled back within {} s", timeout.count() / 1000.0)
                                            : std::string("no agent yet when the run gave up (see the other nodes)"));
  }
  if (missing > 0) throw AgentError(fmt::format("{} of {} agents did not join the run:{}", missing, nodes_, text));
}

}  // namespace chaosbench::harness

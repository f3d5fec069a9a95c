// The controller's end of every agent link: a TCP listener the agents dial back to, one
// handshake per agent, then one I/O thread for all links. The thread files replies under
// their command ids, queues events (a process exited, an agent was lost), turns records
// into the run's records on the controller's clock (each host's offset applied), and
// pings every agent regularly: each ping is a clock exchange and the beat that keeps the
// agent's dead-man switch from firing.
//
// Threads: accept_all() and start() from the run's thread; send/call/wait_* from any
// thread (replies and events are guarded by one mutex); the record sink runs on the I/O
// thread and must be thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "bench/protocol/record.h"
#include "common/files/unique_fd.h"
#include "harness/agent/clock_offset.h"
#include "harness/agent/link_channel.h"
#include "harness/agent/link_handshake.h"
#include "harness/collect/metrics_server.h"

namespace chaosbench::harness {

// A command an agent refused or could not carry out, or an agent that is gone.
class AgentError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct AgentEvent {
  int node = -1;
  nlohmann::json body;  // {"event":"exit",...} or {"event":"lost","why":...}
};

class AgentHub {
 public:
  using RecordSink = std::function<void(const bench::Record&, double received_at)>;

  // Listens on every local address, on `port` (0: an ephemeral one). Throws AgentError
  // when it cannot (the port in use, say). `nodes` agents are expected, node 0..nodes-1.
  // An agent silent for `silence_limit` (not even a pong) is lost: the same limit as the
  // agents' dead-man switch, so both sides give up on each other alike.
  AgentHub(std::string run_id, std::string secret, int nodes, RecordSink sink,
           std::chrono::milliseconds ping_every = std::chrono::milliseconds(1000),
           std::chrono::milliseconds silence_limit = std::chrono::seconds(10), int port = 0);
  ~AgentHub();  // stop()
  AgentHub(const AgentHub&) = delete;
  AgentHub& operator=(const AgentHub&) = delete;

  int port() const { return port_; }

  // Accepts agents until every node has one, for up to `timeout`. Each connection shakes
  // hands on a thread of its own, so a silent or slow peer holds up nobody; agents that
  // joined are pinged meanwhile (their dead-man switches must not fire while the others
  // log in). Between accepts it asks `failures()` which launchers have ended; a node still
  // without an agent that is among them (its launcher ended: ssh could not log in, the binary is
  // missing, an agent of another version refused) ends the wait 3 s later, long enough
  // for the others to fail too. Stops listening when it returns. Throws AgentError
  // naming every node that did not come, and why.
  void accept_all(std::chrono::milliseconds timeout, const std::function<std::map<int, std::string>()>& failures);
  // Starts the I/O thread, then runs `exchanges` quick clock exchanges with every agent.
  void start(int exchanges = 8);

  // Sends a command (an "id" is added) and returns its id. Throws AgentError when the
  // node's agent is gone.
  std::uint64_t send(int node, nlohmann::json command);
  // The reply to `id`; throws AgentError with the agent's reason when it failed, when the
  // agent is lost, or after `timeout`.
  nlohmann::json wait_reply(int node, std::uint64_t id, std::chrono::milliseconds timeout);
  nlohmann::json call(int node, nlohmann::json command, std::chrono::milliseconds timeout);

  // Events in arrival order: up to `timeout` for the first, then whatever else is there.
  std::vector<AgentEvent> wait_events(std::chrono::milliseconds timeout);

  const AgentHello& hello(int node) const { return agents_.at(static_cast<std::size_t>(node))->hello; }
  std::optional<ClockEstimate> clock(int node) const;
  bool lost(int node) const;
  // Whether start() has run: before it, nobody reads the links, so no reply can come.
  bool started() const { return thread_.joinable(); }

  // Says bye to every agent still there and waits up to `timeout` for each one's bye (it
  // has cleaned up by then), then stops the thread and closes the links. Returns what
  // agents reported they could not undo. Idempotent.
  std::vector<std::string> stop(std::chrono::milliseconds timeout = std::chrono::seconds(10));

  std::uint64_t records() const { return records_.load(); }
  std::uint64_t malformed() const { return malformed_.load(); }

 private:
  struct Agent {
    std::unique_ptr<LinkChannel> link;
    AgentHello hello;
    ClockOffsetEstimator clock;
    std::map<std::uint64_t, nlohmann::json> replies;
    std::set<std::uint64_t> awaited;  // ids sent and not yet given up on
    std::chrono::steady_clock::time_point last_heard = std::chrono::steady_clock::now();  // the I/O thread's
    std::string lost;  // why, once the link is gone
    bool bye = false;
    std::vector<std::string> bye_errors;
  };

  struct PendingJoin;
  void accept_into(std::vector<std::shared_ptr<PendingJoin>>& pending);
  bool install(PendingJoin& p);
  void loop();
  void lose_silent();
  void ping_all();
  void read_agent(int node);
  void on_frame(int node, const Frame& frame);
  void on_records(int node, const std::string& lines, bool own);
  void mark_lost(int node, const std::string& why);

  std::string run_id_;
  std::string secret_;
  int nodes_;
  RecordSink sink_;
  std::chrono::milliseconds ping_every_;
  std::chrono::milliseconds silence_limit_;
  common::UniqueFd listen_fd_;
  common::UniqueFd wake_fd_;
  int port_ = 0;
  std::vector<std::unique_ptr<Agent>> agents_;  // by node
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<AgentEvent> events_;
  std::uint64_t next_id_ = 1;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  bool stopped_ = false;
  std::map<int, std::uint64_t> records_by_rank_;  // the I/O thread's
  std::map<int, std::uint64_t> telemetry_by_node_;  // the I/O thread's
  std::atomic<std::uint64_t> records_{0};
  std::atomic<std::uint64_t> malformed_{0};
  std::uint64_t sink_failures_ = 0;  // the I/O thread's: the first is logged
  static constexpr std::size_t kMaxEvents = 100000;
};

}  // namespace chaosbench::harness

// `chaosbench agent`: the controller's hands on one host. It dials back to the
// controller, proves it belongs to the run (link_handshake.h), then runs the node's
// ranks (a process supervisor of its own), applies and reverts the node's faults through
// the registry, forwards the ranks' metrics records, and answers clock pings. Everything
// it makes is in a journal of its own on this host, so `chaosbench cleanup` there
// reverts what a dead agent left.
//
// Dead-man switch: when nothing arrives from the controller for `timeout` (its pings
// come several times a timeout), or the controller's end of the link closes (a killed
// controller's kernel closes it), the agent reverts every fault, stops every rank and
// exits. A SIGKILLed controller therefore leaves nothing behind on any host.
//
// Threads: run() owns the calling thread (it forks the ranks, so it must outlive them);
// the metrics server's thread only appends to the records buffer.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "common/files/unique_fd.h"
#include "faults/fault.h"
#include "harness/agent/agent_telemetry.h"
#include "harness/agent/link_channel.h"
#include "harness/cluster/node_cgroups.h"
#include "harness/journal/journal.h"
#include "harness/collect/metrics_server.h"
#include "harness/process/process_supervisor.h"

namespace chaosbench::faults {
class NetworkPlane;
}

namespace chaosbench::harness {

struct AgentOptions {
  std::string controller_address;  // IPv4 of the controller's link listener
  int controller_port = 0;
  std::string run_id;
  std::string host;  // the inventory's name of this host
  int node = -1;
  std::string secret;  // read from stdin, never from the command line
  std::chrono::milliseconds timeout{10000};  // the dead-man switch
};

// argv[0] of a start command that means "this agent's own chaosbench binary".
inline constexpr const char* kAgentSelfExe = "@chaosbench";
// The control-block path prefix the controller hands a rank; the agent replaces it with
// the rank's block on its host (made on the rank's first start, kept across restarts).
inline constexpr const char* kAgentControlPrefix = "@agent-control:rank";

class Agent {
 public:
  explicit Agent(AgentOptions options);
  ~Agent();
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // Connects, shakes hands and serves until `bye`, a lost controller or the dead-man
  // switch. Returns the exit code: 0 after bye, 1 when it had to clean up on its own,
  // 3 when it could not connect or was refused (nothing was made then).
  int run();

 private:
  using json = nlohmann::json;
  void serve();
  void handle(const Frame& frame);
  json execute(const json& command);
  json op_setup(const json& c);
  json op_start(const json& c);
  json op_apply(const json& c);
  json op_revert(const json& c);
  json op_node_state();
  json op_stop();
  json op_telemetry_open(const json& c);
  json op_telemetry_start(const json& c);
  void make_cgroups(const json& c);
  std::vector<std::string> stop_everything();
  void report_exits();
  void flush_records();
  void send_lines(MessageType type, const std::string& batch);
  // Queues one metrics-protocol line for the controller (any thread): a rank's record, or
  // (`own`) a sample of the agent's telemetry, which travels in telemetry frames.
  void queue_line(std::string_view line, bool own = false);
  std::string control_block(int rank);
  void make_runtime_dir();
  void send_event(const json& event);

  AgentOptions options_;
  std::unique_ptr<LinkChannel> link_;
  std::unique_ptr<Journal> journal_;
  std::string runtime_dir_;
  ProcessSupervisor supervisor_;
  std::map<pid_t, int> rank_of_;  // live and ended processes this agent started
  std::vector<std::uint64_t> process_entries_;
  std::map<int, common::UniqueFd> control_fds_;  // by rank
  std::map<std::uint64_t, std::unique_ptr<faults::Fault>> faults_;  // by the controller's fault id
  std::unique_ptr<NodeCgroups> cgroups_;  // the node's cgroups on this host (setup)
  common::UniqueFd netns_;  // this host's network namespace, for the plane
  std::unique_ptr<faults::NetworkPlane> plane_;
  std::vector<std::string> addresses_;  // the job's hosts by node (setup)
  std::string interface_;               // where network faults act (setup)
  std::unique_ptr<MetricsServer> metrics_;
  std::mutex records_mutex_;
  std::string records_;  // encoded lines waiting to go to the controller
  std::string telemetry_lines_;  // the agent's own samples waiting, under records_mutex_
  std::uint64_t records_dropped_ = 0;  // under records_mutex_
  std::chrono::steady_clock::time_point last_heard_;
  bool bye_ = false;
  bool stopped_ = false;
  // The mesh and node telemetry (telemetry_open). Last: its threads' sink uses the record
  // buffers and their mutex, so it goes first.
  std::unique_ptr<AgentTelemetry> telemetry_;
};

}  // namespace chaosbench::harness

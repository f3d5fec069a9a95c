// The node site for nodes on other hosts (cluster.mode "ssh"), or in agent processes on
// this machine ("local-agents"): one `chaosbench agent` per node, started by the
// launcher, linked back to the hub, doing on its host what the local site does here.
// Processes are known by controller-side ids (the agent's pid where it is unique, else
// a number above any pid); faults go to the agents that act on them (remote_fault.h).
// See node_site.h for the contract.
// Threads: the run's thread only (the hub's thread delivers records and events).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "harness/agent/agent_hub.h"
#include "harness/site/agent_launcher.h"
#include "harness/site/node_site.h"
#include "harness/site/rendezvous_server.h"
#include "reports/model/run_model.h"

namespace chaosbench::harness {

class RemoteSite final : public NodeSite {
 public:
  // Starts every node's agent and waits until all have joined and taken their setup
  // (addresses, interfaces). Throws HostError (exit 3) naming each host that did not: an
  // unreachable host, a wrong key, a missing or different chaosbench, an interface not
  // allowed. Nothing has been applied on any host then, and what started is stopped.
  RemoteSite(const Scenario& scenario, const std::string& run_id, const std::string& out_dir,
             const std::string& runtime_dir, AgentHub::RecordSink sink);
  ~RemoteSite() override;

  pid_t start(int node, ProcessSpec spec) override;
  void signal(pid_t pid, int sig) override;
  const ProcessStatus& status(pid_t pid) const override { return procs_.at(pid).status; }
  bool any_running() const override;
  std::vector<pid_t> wait_any(std::chrono::milliseconds timeout) override;
  std::vector<std::string> stop_all() override;

  std::string address(int node) const override;
  std::string host_name(int node) const override { return hub_->hello(node).host; }
  int free_port(int node) override;
  std::string store_spec(int node) const override;
  std::string store_token() const override { return store_token_; }
  std::string control_block(int rank) override;

  std::unique_ptr<faults::Fault> apply_fault(const FaultSpec& spec, std::size_t fault_index,
                                             const std::vector<RankProcess>& ranks,
                                             std::vector<std::string>* targets) override;

  bool frozen(int node) const override;
  bool oom_killed(int node) const override;

  // The run's own measurements on the hosts (docs/diagnosis.md): each agent's end of the
  // link mesh (with `mesh`: not in local-agents, whose nodes share one loopback) and its
  // node's telemetry, their samples coming back as the controller's own records. Every
  // agent opens its part, then all start with every node's mesh port. Whether any part
  // runs; `notes` gets one line for each part a host could not run (the run goes on
  // without it). Throws nothing.
  bool start_telemetry(const MeshSpec& spec, bool mesh, std::vector<std::string>* notes);
  // Stops them on every host still there and returns the meshes' own figures summed
  // (probes, echoes, refused, cpu_s, wall_s: the longest); null when none ran. The agents
  // stop them too at `stop`, or on their own. Idempotent.
  nlohmann::json stop_telemetry();

  // Each host's name, address, hostname and clock offset, for results.json.
  std::vector<reports::HostRecord> hosts() const;
  std::string description() const;

 private:
  struct Proc {
    int node = -1;
    pid_t remote = -1;
    ProcessStatus status;
  };
  void set_up_agents(const Scenario& scenario);
  pid_t local_pid(int node, pid_t remote);
  void mark_ended(pid_t id, const nlohmann::json& event);
  std::vector<nlohmann::json> telemetry_round(const nlohmann::json& command, const std::vector<bool>& to,
                                              std::vector<std::string>* notes);

  const ClusterSpec& cluster_;
  std::uint64_t seed_;
  std::unique_ptr<AgentHub> hub_;
  std::unique_ptr<AgentLauncher> launcher_;
  std::string store_token_;
  std::unique_ptr<RendezvousServer> store_;  // the ranks' rendezvous store: hosts share no /tmp
  std::map<pid_t, Proc> procs_;
  std::map<std::pair<int, pid_t>, pid_t> by_remote_;
  std::vector<std::string> interfaces_;  // by node, what setup reported
  pid_t next_synthetic_ = 1 << 22;       // above pid_max's ceiling
  std::uint64_t next_fault_ = 1;
  bool stopped_ = false;
  bool telemetry_ = false;  // start_telemetry() reached the agents
};

}  // namespace chaosbench::harness

// Starts one `chaosbench agent` per node and watches the processes that carry them: the
// system OpenSSH client for cluster.mode "ssh" (BatchMode, so it never waits for a
// password; multiplexed through a control socket in the run's runtime directory), one
// srun step of one task per node for "slurm" (inside the current allocation, or one srun
// asks for), or the agent itself for "local-agents". The run's secret goes down each one's standard input
// (a pipe), never onto a command line. The launcher processes are this process's
// children (PR_SET_PDEATHSIG): a controller that dies takes its ssh sessions with it, and
// the agents see their link close.
// Threads: the run's thread only.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <sys/types.h>
#include <vector>

#include "harness/process/process_supervisor.h"
#include "harness/scenario/scenario.h"

namespace chaosbench::harness {

struct AgentLaunch {
  std::string run_id;
  std::string secret;
  int controller_port = 0;
  std::string log_dir;      // agent-<host>.log: what ssh and the agent say on stderr
  std::string runtime_dir;  // the ssh control sockets
};

class AgentLauncher {
 public:
  // Throws HostError when Slurm's allocation has fewer nodes than the cluster, or no
  // route to the hosts exists: before anything starts.
  AgentLauncher(const ClusterSpec& cluster, AgentLaunch launch);
  ~AgentLauncher();  // stop()

  // Starts every node's agent. Throws HostError when a launcher cannot start here (no
  // ssh client, no srun).
  void launch_all();
  // The nodes whose launcher has ended, each with why (its exit status and the last lines
  // of its log: ssh's "Permission denied", the remote shell's "command not found"). Reaps
  // once for all nodes: it is asked many times a second while agents join.
  std::map<int, std::string> failures();
  // The host `node` runs on, as messages name it ("h1 (10.0.0.2)").
  std::string host_label(int node) const;
  // The address the agent of `node` is to dial: the controller's address on the route
  // towards that host (loopback for local agents).
  std::string controller_address(int node) const;
  // Waits up to `grace` for every launcher to end (the agents said bye), then ends the
  // rest. Idempotent.
  void stop(std::chrono::milliseconds grace = std::chrono::seconds(5));

 private:
  void launch(int node, std::vector<std::string> argv);
  std::string failure(int node) const;  // "" while node's launcher runs (as last reaped)
  std::vector<std::string> agent_argv(int node) const;
  std::vector<std::string> ssh_argv(int node, const std::vector<std::string>& remote) const;
  std::vector<std::string> srun_argv() const;
  std::string log_path(int node) const;

  const ClusterSpec& cluster_;
  AgentLaunch launch_;
  ProcessSupervisor supervisor_;
  std::vector<pid_t> pids_;  // by node; -1 before launch (slurm: every node's is the srun)
  std::string slurm_controller_;  // slurm: the controller's address towards the nodes
  bool stopped_ = false;
};

// `arg` quoted for a POSIX shell (ssh hands the remote command to the login shell).
std::string shell_quote(const std::string& arg);

}  // namespace chaosbench::harness

#include "common/process/program_path.h"
#include "harness/site/agent_launcher.h"

#include <arpa/inet.h>
#include <algorithm>
#include <cmath>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/files/unique_fd.h"
#include "harness/agent/host_interfaces.h"
#include "harness/core/host_error.h"
#include "harness/site/slurm_allocation.h"

namespace chaosbench::harness {
namespace {

// The last `n` non-empty lines of `path`, joined by "; ".
std::string tail_of(const std::string& path, std::size_t n) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line.substr(0, 300));
  std::string out;
  for (std::size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i) {
    if (!out.empty()) out.append("; ");
    out.append(lines[i]);
  }
  return out;
}

}  // namespace

std::string shell_quote(const std::string& arg) {
  if (!arg.empty() && arg.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789@%+=:,./-_") ==
                          std::string::npos)
    return arg;
  std::string out = "'";
  for (char c : arg) {
    if (c == '\'') out.append("'\\''");
    else out.push_back(c);
  }
  out.push_back('\'');
  return out;
}

AgentLauncher::AgentLauncher(const ClusterSpec& cluster, AgentLaunch launch)
    : cluster_(cluster), launch_(std::move(launch)), pids_(static_cast<std::size_t>(cluster.nodes), -1) {
  if (cluster_.mode != ClusterMode::kSlurm) return;
  if (auto a = current_slurm_allocation(); a && a->nodes < cluster_.nodes)
    throw HostError(fmt::format("the Slurm allocation {} has {} node{}; the scenario needs {} (cluster.nodes): ask "
                                "salloc or sbatch for {} nodes", a->job_id, a->nodes, a->nodes == 1 ? "" : "s",
                                cluster_.nodes, cluster_.nodes));
  std::string why;
  slurm_controller_ = source_address_towards(first_slurm_node_address(cluster_.remote), &why);
  if (slurm_controller_.empty()) throw HostError(fmt::format("no route from here to the Slurm nodes: {}", why));
}

AgentLauncher::~AgentLauncher() { stop(std::chrono::milliseconds(0)); }

std::string AgentLauncher::host_label(int node) const {
  if (cluster_.mode == ClusterMode::kSlurm) return fmt::format("Slurm node {}", node);
  if (cluster_.mode != ClusterMode::kSsh) return fmt::format("local agent {}", node);
  const auto& h = cluster_.hosts.at(static_cast<std::size_t>(node));
  return fmt::format("{} ({})", h.name, h.address);
}

std::string AgentLauncher::controller_address(int node) const {
  if (cluster_.mode == ClusterMode::kSlurm) return slurm_controller_;
  if (cluster_.mode != ClusterMode::kSsh) return "127.0.0.1";
  std::string why;
  return source_address_towards(cluster_.hosts.at(static_cast<std::size_t>(node)).address, &why);
}

std::string AgentLauncher::log_path(int node) const {
  if (cluster_.mode == ClusterMode::kSlurm) return launch_.log_dir + "/agents-srun.log";
  const std::string name = cluster_.mode == ClusterMode::kSsh ? cluster_.hosts.at(static_cast<std::size_t>(node)).name
                                                              : fmt::format("node{}", node);
  return fmt::format("{}/agent-{}.log", launch_.log_dir, name);
}

// The agent's command line; node -1: the one command of a Slurm step, where each task
// takes its node from Slurm (--slurm).
std::vector<std::string> AgentLauncher::agent_argv(int node) const {
  const bool local = cluster_.mode == ClusterMode::kLocalAgents;
  const std::string controller = controller_address(node);
  if (controller.empty()) throw HostError(fmt::format("no route from this machine to {}", host_label(node)));
  std::vector<std::string> argv{local ? common::self_exe() : cluster_.remote.agent_command,
                                "agent",
                                "--controller", fmt::format("{}:{}", controller, launch_.controller_port),
                                "--run-id", launch_.run_id,
                                "--timeout", fmt::format("{}", cluster_.remote.agent_timeout.seconds())};
  if (node < 0) {
    argv.push_back("--slurm");
    return argv;
  }
  const bool ssh = cluster_.mode == ClusterMode::kSsh;
  argv.insert(argv.end(), {"--host", ssh ? cluster_.hosts[static_cast<std::size_t>(node)].name : fmt::format("node{}", node),
                           "--node", std::to_string(node)});
  return argv;
}

// One task per node, all in one step (the way `srun torchrun` runs): the secret goes to
// every task's stdin; --overlap lets it share an allocation's nodes with other steps.
std::vector<std::string> AgentLauncher::srun_argv() const {
  const int n = cluster_.nodes;
  std::vector<std::string> argv{"srun", fmt::format("--nodes={}", n), fmt::format("--ntasks={}", n),
                                "--ntasks-per-node=1", "--overlap", "--input=all", "--kill-on-bad-exit=0", "--label",
                                fmt::format("--job-name=chaosbench-{}", launch_.run_id)};
  if (!current_slurm_allocation()) {
    if (!cluster_.remote.slurm_partition.empty()) argv.push_back("--partition=" + cluster_.remote.slurm_partition);
    if (cluster_.remote.slurm_time_limit)
      argv.push_back(fmt::format("--time={}", static_cast<long>(std::ceil(cluster_.remote.slurm_time_limit->seconds() / 60))));
  }
  argv.insert(argv.end(), cluster_.remote.slurm_options.begin(), cluster_.remote.slurm_options.end());
  const auto agent = agent_argv(-1);
  argv.insert(argv.end(), agent.begin(), agent.end());
  return argv;
}

void AgentLauncher::launch_all() {
  if (cluster_.mode == ClusterMode::kSlurm) {
    launch(-1, srun_argv());
    return;
  }
  for (int n = 0; n < cluster_.nodes; ++n)
    launch(n, cluster_.mode == ClusterMode::kSsh ? ssh_argv(n, agent_argv(n)) : agent_argv(n));
}

std::vector<std::string> AgentLauncher::ssh_argv(int node, const std::vector<std::string>& remote) const {
  const auto& h = cluster_.hosts.at(static_cast<std::size_t>(node));
  std::vector<std::string> argv{"ssh"};
  if (!cluster_.remote.ssh_config.empty()) argv.insert(argv.end(), {"-F", cluster_.remote.ssh_config});
  if (!cluster_.remote.ssh_identity.empty()) argv.insert(argv.end(), {"-i", cluster_.remote.ssh_identity});
  // BatchMode: a missing key is an error, never a password prompt. The control socket
  // lets later connections to the host (cleanup) ride the same session.
  argv.insert(argv.end(), {"-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "-o", "ServerAliveInterval=5",
                           "-o", "ControlMaster=auto", "-o", fmt::format("ControlPath={}/ssh-%C", launch_.runtime_dir),
                           "-o", "ControlPersist=no", "-T", "-p", std::to_string(h.port)});
  for (const auto& o : cluster_.remote.ssh_options) argv.insert(argv.end(), {"-o", o});
  if (!h.user.empty()) argv.insert(argv.end(), {"-l", h.user});
  argv.push_back(h.address);
  argv.push_back("--");
  std::string command;
  for (const auto& a : remote) {
    if (!command.empty()) command.push_back(' ');
    command.append(shell_quote(a));
  }
  argv.push_back("exec " + command);
  return argv;
}

// Starts one launcher process (node -1: the srun of every node) with the secret on its stdin.
void AgentLauncher::launch(int node, std::vector<std::string> argv) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw HostError("cannot make a pipe for an agent's secret");
  common::UniqueFd read_end(pipe_fds[0]), write_end(pipe_fds[1]);
  const std::string line = launch_.secret + "\n";
  if (::write(write_end.get(), line.data(), line.size()) != static_cast<ssize_t>(line.size()))
    throw HostError("cannot write an agent's secret into its pipe");
  write_end.reset();  // the agent reads the line, then EOF
  ProcessSpec spec;
  spec.name = node < 0 ? std::string("agents") : fmt::format("agent{}", node);
  spec.argv = std::move(argv);
  spec.stdout_path = spec.stderr_path = log_path(std::max(node, 0));
  spec.stdin_fd = read_end.get();
  // When the controller dies: a local agent gets SIGTERM and cleans up after itself (its
  // journal, its ranks); an ssh client just dies, and its agent sees the link close. srun
  // gets nothing: on a signal it cancels the step, and Slurm would SIGKILL the agents in
  // the middle of reverting; left alone, it ends when its agents, seeing the link close,
  // have cleaned up and exited.
  if (cluster_.mode == ClusterMode::kLocalAgents) spec.death_signal = SIGTERM;
  if (cluster_.mode == ClusterMode::kSlurm) spec.death_signal = 0;
  pid_t pid;
  try {
    pid = supervisor_.start(spec);
  } catch (const std::runtime_error& e) {
    throw HostError(fmt::format("cannot start the agent{} for {}: {}", node < 0 ? "s' srun step" : "",
                                node < 0 ? std::string("the Slurm nodes") : host_label(node), e.what()));
  }
  if (node < 0) std::fill(pids_.begin(), pids_.end(), pid);
  else pids_[static_cast<std::size_t>(node)] = pid;
}

std::map<int, std::string> AgentLauncher::failures() {
  supervisor_.poll();
  std::map<int, std::string> out;
  for (int node = 0; node < cluster_.nodes; ++node)
    if (std::string why = failure(node); !why.empty()) out.emplace(node, std::move(why));
  return out;
}

std::string AgentLauncher::failure(int node) const {
  const pid_t pid = pids_.at(static_cast<std::size_t>(node));
  if (pid < 0) return "";
  const auto& s = supervisor_.status(pid);
  if (s.running) return "";
  const std::string how = s.exit_code ? fmt::format("exited with code {}", *s.exit_code)
                                      : fmt::format("was killed by signal {}", s.signal.value_or(0));
  const std::string what = cluster_.mode == ClusterMode::kSsh     ? "ssh to " + host_label(node)
                           : cluster_.mode == ClusterMode::kSlurm ? std::string("the agents' srun step")
                                                                  : host_label(node);
  std::string tail = tail_of(log_path(node), 3);
  if (s.exit_code == 127 && cluster_.mode == ClusterMode::kSsh)
    tail += fmt::format(" (is chaosbench installed there? cluster.agent.command is \"{}\")", cluster_.remote.agent_command);
  return fmt::format("{} {}{}", what, how, tail.empty() ? "" : ": " + tail);
}

void AgentLauncher::stop(std::chrono::milliseconds grace) {
  if (stopped_) return;
  stopped_ = true;
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (supervisor_.any_running() && std::chrono::steady_clock::now() < deadline)
    supervisor_.wait_any(std::chrono::milliseconds(50));
  supervisor_.stop_all(std::chrono::milliseconds(500));
}

}  // namespace chaosbench::harness

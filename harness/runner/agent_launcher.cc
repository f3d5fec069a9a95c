#include "common/program_path.h"
#include "harness/runner/agent_launcher.h"

#include <arpa/inet.h>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/unique_fd.h"
#include "harness/agent/host_interfaces.h"
#include "harness/host_error.h"

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
    : cluster_(cluster), launch_(std::move(launch)), pids_(static_cast<std::size_t>(cluster.nodes), -1) {}

AgentLauncher::~AgentLauncher() { stop(std::chrono::milliseconds(0)); }

std::string AgentLauncher::host_label(int node) const {
  if (cluster_.mode != ClusterMode::kSsh) return fmt::format("local agent {}", node);
  const auto& h = cluster_.hosts.at(static_cast<std::size_t>(node));
  return fmt::format("{} ({})", h.name, h.address);
}

std::string AgentLauncher::controller_address(int node) const {
  if (cluster_.mode != ClusterMode::kSsh) return "127.0.0.1";
  std::string why;
  return source_address_towards(cluster_.hosts.at(static_cast<std::size_t>(node)).address, &why);
}

std::string AgentLauncher::log_path(int node) const {
  const std::string name = cluster_.mode == ClusterMode::kSsh ? cluster_.hosts.at(static_cast<std::size_t>(node)).name
                                                              : fmt::format("node{}", node);
  return fmt::format("{}/agent-{}.log", launch_.log_dir, name);
}

std::vector<std::string> AgentLauncher::agent_argv(int node) const {
  const bool ssh = cluster_.mode == ClusterMode::kSsh;
  const std::string controller = controller_address(node);
  if (controller.empty()) throw HostError(fmt::format("no route from this machine to {}", host_label(node)));
  return {ssh ? cluster_.remote.agent_command : common::self_exe(),
          "agent",
          "--controller", fmt::format("{}:{}", controller, launch_.controller_port),
          "--run-id", launch_.run_id,
          "--host", ssh ? cluster_.hosts[static_cast<std::size_t>(node)].name : fmt::format("node{}", node),
          "--node", std::to_string(node),
          "--timeout", fmt::format("{}", cluster_.remote.agent_timeout.seconds())};
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

void AgentLauncher::launch(int node) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw HostError("cannot make a pipe for an agent's secret");
  common::UniqueFd read_end(pipe_fds[0]), write_end(pipe_fds[1]);
  const std::string line = launch_.secret + "\n";
  if (::write(write_end.get(), line.data(), line.size()) != static_cast<ssize_t>(line.size()))
    throw HostError("cannot write an agent's secret into its pipe");
  write_end.reset();  // the agent reads the line, then EOF
  ProcessSpec spec;
  spec.name = fmt::format("agent{}", node);
  const auto agent = agent_argv(node);
  spec.argv = cluster_.mode == ClusterMode::kSsh ? ssh_argv(node, agent) : agent;
  spec.stdout_path = spec.stderr_path = log_path(node);
  spec.stdin_fd = read_end.get();
  // A local agent outliving a killed controller gets SIGTERM and cleans up after itself
  // (its journal, its ranks); an ssh client just dies, and its agent sees the link close.
  if (cluster_.mode != ClusterMode::kSsh) spec.death_signal = SIGTERM;
  try {
    pids_[static_cast<std::size_t>(node)] = supervisor_.start(spec);
  } catch (const std::runtime_error& e) {
    throw HostError(fmt::format("cannot start the agent for {}: {}", host_label(node), e.what()));
  }
}

std::string AgentLauncher::failed(int node) {
  supervisor_.poll();
  const pid_t pid = pids_.at(static_cast<std::size_t>(node));
  if (pid < 0) return "";
  const auto& s = supervisor_.status(pid);
  if (s.running) return "";
  const std::string how = s.exit_code ? fmt::format("exited with code {}", *s.exit_code)
                                      : fmt::format("was killed by signal {}", s.signal.value_or(0));
  const std::string what = cluster_.mode == ClusterMode::kSsh ? "ssh to " + host_label(node) : host_label(node);
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

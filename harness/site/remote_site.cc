#include "common/process/program_path.h"
#include "harness/site/remote_site.h"

#include <csignal>
#include <filesystem>
#include <fmt/format.h>
#include <set>
#include <spdlog/spdlog.h>

#include "common/gpu/control_block.h"
#include "faults/registry/registry.h"
#include "harness/agent/agent.h"
#include "harness/agent/fault_wire.h"
#include "common/json/json_values.h"
#include "harness/agent/link_auth.h"
#include "harness/core/host_error.h"
#include "harness/site/remote_fault.h"

namespace chaosbench::harness {

using common::json_text;
using common::json_integer;
using common::json_flag;

using json = nlohmann::json;
using std::chrono::milliseconds;

namespace {

constexpr milliseconds kJoinTimeout{30000};
constexpr milliseconds kCommandTimeout{15000};

}  // namespace

RemoteSite::RemoteSite(const Scenario& scenario, const std::string& run_id, const std::string& out_dir,
                       const std::string& runtime_dir, AgentHub::RecordSink sink)
    : cluster_(scenario.cluster), seed_(scenario.seed) {
  const int nodes = cluster_.nodes;
  const std::string secret = make_link_secret();
  const auto beat = std::chrono::duration_cast<milliseconds>(cluster_.remote.agent_timeout.value) / 5;
  try {
    hub_ = std::make_unique<AgentHub>(run_id, secret, nodes, std::move(sink), std::min(beat, milliseconds(1000)),
                                      std::chrono::duration_cast<milliseconds>(cluster_.remote.agent_timeout.value),
                                      cluster_.remote.agent_port);
  } catch (const AgentError& e) {
    throw HostError(e.what());  // nothing started yet
  }
  AgentLaunch launch{run_id, secret, hub_->port(), out_dir + "/logs", runtime_dir};
  std::filesystem::create_directories(launch.log_dir);
  launcher_ = std::make_unique<AgentLauncher>(cluster_, launch);
  try {
    launcher_->launch_all();
    hub_->accept_all(kJoinTimeout, [this] { return launcher_->failures(); });
    hub_->start();
    set_up_agents(scenario);
    store_token_ = make_link_secret();
    RendezvousServer::Limits limits;
    if (cluster_.remote.agent_port > 0) limits.port = cluster_.remote.agent_port + 1;
    try {
      store_ = std::make_unique<RendezvousServer>(store_token_, limits);
    } catch (const std::runtime_error& e) {
      throw HostError(e.what());
    }
  } catch (const AgentError& e) {
    stop_all();
    throw HostError(e.what());
  } catch (...) {
    stop_all();
    throw;
  }
}

RemoteSite::~RemoteSite() {
  try {
    stop_all();
  } catch (const std::exception& e) {
    spdlog::error("stopping the agents: {}", e.what());
  }
}

// Every agent learns the job's addresses and where faults may act; a host whose traffic
// to its peers leaves by an interface not allowed is refused here, before any fault.
void RemoteSite::set_up_agents(const Scenario& scenario) {
  bool network = false;
  json cgroups = json::array();  // the controllers the faults need on their nodes
  for (const auto& f : scenario.faults) {
    network = network || f.type.starts_with("network.");
    if (const auto need = std::string(faults::find_fault_type(f.type)->needs_cgroup); !need.empty()) cgroups.push_back(need);
  }
  if (network && cluster_.mode == ClusterMode::kLocalAgents)
    throw AgentError("local agents share this machine's loopback, so there is no traffic between hosts for a network "
                     "fault to act on: use cluster.mode \"ssh\" (hosts with addresses of their own) or \"namespaces\"");
  std::vector<std::string> addresses;
  for (int n = 0; n < cluster_.nodes; ++n) addresses.push_back(address(n));
  std::vector<std::uint64_t> ids;
  for (int n = 0; n < cluster_.nodes; ++n) {
    json interfaces = json::array();
    if (cluster_.mode == ClusterMode::kSsh) interfaces = cluster_.hosts[static_cast<std::size_t>(n)].interfaces;
    if (cluster_.mode == ClusterMode::kSlurm) interfaces = cluster_.remote.slurm_interfaces;
    ids.push_back(hub_->send(n, {{"op", "setup"}, {"addresses", addresses}, {"interfaces", interfaces},
                                 {"network_faults", network}, {"cgroups", cgroups}, {"seed", seed_}}));
  }
  std::string errors;
  for (int n = 0; n < cluster_.nodes; ++n) {
    try {
      interfaces_.push_back(json_text(hub_->wait_reply(n, ids[static_cast<std::size_t>(n)], kCommandTimeout), "interface"));
    } catch (const AgentError& e) {
      interfaces_.emplace_back();
      errors += fmt::format("\n  {}", e.what());
    }
  }
  if (!errors.empty()) throw AgentError(fmt::format("the hosts cannot run this scenario:{}", errors));
}

pid_t RemoteSite::local_pid(int node, pid_t remote) {
  auto it = by_remote_.find({node, remote});
  if (it != by_remote_.end()) return it->second;
  const pid_t id = procs_.count(remote) ? next_synthetic_++ : remote;
  by_remote_[{node, remote}] = id;
  return id;
}

pid_t RemoteSite::start(int node, ProcessSpec spec) {
  if (!spec.argv.empty() && spec.argv[0] == common::self_exe()) spec.argv[0] = kAgentSelfExe;
  int rank = -1;
  if (auto it = spec.env.find(CB_CONTROL_ENV); it != spec.env.end() && it->second.starts_with(kAgentControlPrefix))
    rank = std::stoi(it->second.substr(std::string_view(kAgentControlPrefix).size()));
  json reply;
  try {
    reply = hub_->call(node, {{"op", "start"}, {"name", spec.name}, {"rank", rank}, {"argv", spec.argv},
                              {"env", spec.env}, {"cwd", spec.cwd}, {"stdout", spec.stdout_path},
                              {"stderr", spec.stderr_path}}, kCommandTimeout);
  } catch (const AgentError& e) {
    throw std::runtime_error(fmt::format("cannot start {} on node {}: {}", spec.name, node, e.what()));
  }
  const auto remote = static_cast<pid_t>(json_integer<std::int64_t>(reply, "pid", -1));
  if (remote <= 0) throw std::runtime_error(fmt::format("cannot start {} on node {}: the agent named no process", spec.name, node));
  const pid_t id = local_pid(node, remote);
  Proc p;
  p.node = node;
  p.remote = remote;
  p.status.pid = id;
  procs_[id] = p;
  return id;
}

void RemoteSite::signal(pid_t pid, int sig) {
  auto it = procs_.find(pid);
  if (it == procs_.end() || !it->second.status.running) return;
  try {
    hub_->call(it->second.node, {{"op", "signal"}, {"pid", it->second.remote}, {"signal", sig}}, kCommandTimeout);
  } catch (const AgentError& e) {
    spdlog::warn("signal {} to process {} on node {}: {}", sig, pid, it->second.node, e.what());
  }
}

bool RemoteSite::any_running() const {
  for (const auto& [id, p] : procs_)
    if (p.status.running) return true;
  return false;
}

void RemoteSite::mark_ended(pid_t id, const json& event) {
  auto& s = procs_.at(id).status;
  if (!s.running) return;
  s.running = false;
  if (const auto code = json_integer<std::int64_t>(event, "exit_code", -1); code >= 0 && code < 256) s.exit_code = static_cast<int>(code);
  if (const auto sig = json_integer<std::int64_t>(event, "signal", 0); sig > 0 && sig < 128) s.signal = static_cast<int>(sig);
  if (!s.exit_code && !s.signal) s.signal = SIGKILL;
}

std::vector<pid_t> RemoteSite::wait_any(milliseconds timeout) {
  std::vector<pid_t> changed;
  if (stopped_) return changed;
  for (const auto& e : hub_->wait_events(timeout)) {
    const std::string kind = json_text(e.body, "event");
    if (kind == "exit") {
      auto it = by_remote_.find({e.node, static_cast<pid_t>(json_integer<std::int64_t>(e.body, "pid", -1))});
      if (it == by_remote_.end()) continue;
      mark_ended(it->second, e.body);
      changed.push_back(it->second);
    } else if (kind == "lost") {
      // The host's agent is gone: its processes are gone from the run too.
      spdlog::error("node {} ({}): the agent is lost: {}", e.node, launcher_->host_label(e.node), json_text(e.body, "why"));
      for (auto& [id, p] : procs_)
        if (p.node == e.node && p.status.running) {
          mark_ended(id, json::object());
          changed.push_back(id);
        }
    }
  }
  return changed;
}

std::vector<std::string> RemoteSite::stop_all() {
  if (stopped_) return {};
  stopped_ = true;
  std::vector<std::string> errors;
  if (!hub_) return errors;
  std::vector<std::pair<int, std::uint64_t>> sent;
  // Before the hub runs (some agent never joined), the agents have started nothing: the
  // hub's bye is all they need.
  for (int n = 0; n < cluster_.nodes && hub_->started(); ++n) {
    try {
      if (!hub_->lost(n)) sent.emplace_back(n, hub_->send(n, {{"op", "stop"}}));
    } catch (const std::exception&) {  // not joined, or gone: nothing to ask
    }
  }
  // One deadline for all: hung agents cost it once, not once each.
  const auto deadline = std::chrono::steady_clock::now() + kJoinTimeout;
  for (const auto& [node, id] : sent) {
    try {
      const auto left = std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
      const json reply = hub_->wait_reply(node, id, std::max(left, milliseconds(1)));
      if (reply.contains("errors") && reply["errors"].is_array())
        for (const auto& e : reply["errors"]) errors.push_back(fmt::format("node {}: {}", node, e.dump()));
      if (reply.contains("processes") && reply["processes"].is_array())
        for (const auto& p : reply["processes"]) {
          auto it = by_remote_.find({node, static_cast<pid_t>(json_integer<std::int64_t>(p, "pid", -1))});
          if (it != by_remote_.end()) mark_ended(it->second, p);
        }
    } catch (const AgentError& e) {
      errors.emplace_back(e.what());
    }
  }
  for (auto& [id, p] : procs_)
    if (p.status.running) mark_ended(id, json::object());
  for (auto& e : hub_->stop()) errors.push_back(std::move(e));
  if (store_) store_->stop();
  if (launcher_) launcher_->stop();
  return errors;
}

std::string RemoteSite::address(int node) const {
  if (cluster_.mode == ClusterMode::kSsh) return cluster_.hosts.at(static_cast<std::size_t>(node)).address;
  if (cluster_.mode == ClusterMode::kSlurm) return hub_->hello(node).address;  // where its agent dialled from
  return "127.0.0.1";
}

int RemoteSite::free_port(int node) {
  try {
    const auto port = json_integer<std::int64_t>(hub_->call(node, {{"op", "port"}}, kCommandTimeout), "port", -1);
    if (port <= 0 || port > 65535) throw AgentError(fmt::format("node {}: the agent named no free port", node));
    return static_cast<int>(port);
  } catch (const AgentError& e) {
    throw HostError(e.what());
  }
}

std::string RemoteSite::store_spec(int node) const {
  return fmt::format("tcp:{}:{}", launcher_->controller_address(node), store_->port());
}

// The agent makes the block on the rank's host when the rank first starts (start sends
// the rank) and keeps it for the run; the controller only names it.
std::string RemoteSite::control_block(int rank) { return kAgentControlPrefix + std::to_string(rank); }

std::unique_ptr<faults::Fault> RemoteSite::apply_fault(const FaultSpec& spec, std::size_t fault_index,
                                                       const std::vector<RankProcess>& ranks,
                                                       std::vector<std::string>* targets) {
  // Nodes and ranks only: the processes are the agents' to find on their hosts (this
  // machine's /proc knows nothing of them), so the resolver is given none.
  std::vector<RankProcess> placed = ranks;
  for (auto& r : placed) r.pid = -1;
  const auto target = resolve_target(spec.target, cluster_, placed, seed_, fault_index, nullptr);
  *targets = target.names();
  const auto* info = faults::find_fault_type(spec.type);
  // A network fault acts on every host: each places its own share of the traffic.
  std::set<int> nodes;
  if (spec.type.starts_with("network."))
    for (int n = 0; n < cluster_.nodes; ++n) nodes.insert(n);
  for (int n : target.nodes) nodes.insert(n);
  for (const auto& r : ranks)
    if (std::find(target.ranks.begin(), target.ranks.end(), r.rank) != target.ranks.end()) nodes.insert(r.node);
  json command{{"type", spec.type}, {"params", encode_params(spec.params)}, {"target", encode_target(target)}};
  auto fault = std::make_unique<RemoteFault>(*hub_, next_fault_++, std::move(command),
                                             std::vector<int>(nodes.begin(), nodes.end()), info->reversible,
                                             [this](int node, pid_t remote) { return local_pid(node, remote); });
  faults::NullUndoLog no_log;  // each agent journals its share on its own host
  fault->apply(target, no_log);
  return fault;
}

bool RemoteSite::frozen(int node) const {
  try {
    return json_flag(hub_->call(node, {{"op", "node_state"}}, kCommandTimeout), "frozen");
  } catch (const AgentError&) {
    return false;
  }
}

bool RemoteSite::oom_killed(int node) const {
  try {
    return json_flag(hub_->call(node, {{"op", "node_state"}}, kCommandTimeout), "oom_killed");
  } catch (const AgentError&) {
    return false;
  }
}

std::vector<reports::HostRecord> RemoteSite::hosts() const {
  std::vector<reports::HostRecord> out;
  for (int n = 0; n < cluster_.nodes; ++n) {
    reports::HostRecord h;
    const auto& hello = hub_->hello(n);
    h.name = hello.host;
    h.address = address(n);
    h.hostname = hello.hostname;
    h.interface = n < static_cast<int>(interfaces_.size()) ? interfaces_[static_cast<std::size_t>(n)] : "";
    if (auto c = hub_->clock(n)) {
      h.clock_offset_ms = c->offset_s * 1e3;
      h.clock_uncertainty_ms = c->uncertainty_s * 1e3;
    }
    out.push_back(h);
  }
  return out;
}

std::string RemoteSite::description() const {
  if (cluster_.mode == ClusterMode::kSsh) return fmt::format("{} hosts over SSH, one chaosbench agent each", cluster_.nodes);
  if (cluster_.mode == ClusterMode::kSlurm)
    return fmt::format("{} Slurm nodes, one chaosbench agent each as one srun step", cluster_.nodes);
  return fmt::format("{} chaosbench agents as local processes on loopback", cluster_.nodes);
}

}  // namespace chaosbench::harness

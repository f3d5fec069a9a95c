// The agent's commands (docs/agent-protocol.md, "Commands"): each takes the command's
// JSON and returns the reply's, {"ok": true, ...} or {"ok": false, "error": why}.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "common/process/crash_point.h"
#include "bench/protocol/record.h"
#include "common/process/program_path.h"
#include "common/gpu/control_block.h"
#include "common/gpu/fault_control.h"
#include "faults/network/network_plane.h"
#include "faults/registry/registry.h"
#include "harness/agent/agent.h"
#include "harness/agent/fault_wire.h"
#include "harness/agent/host_interfaces.h"
#include "harness/cluster/node_state.h"
#include "harness/journal/process_group_undo.h"
#include "harness/journal/process_identity.h"

namespace chaosbench::harness {

using json = nlohmann::json;

namespace {

json ok(json fields = json::object()) {
  fields["ok"] = true;
  return fields;
}

}  // namespace

json Agent::execute(const json& c) {
  if (!c.is_object() || !c.contains("op") || !c["op"].is_string()) return {{"ok", false}, {"error", "not a command"}};
  const std::string op = c["op"].get<std::string>();
  try {
    if (op == "setup") return op_setup(c);
    if (op == "start") return op_start(c);
    if (op == "signal") {
      supervisor_.signal(c.at("pid").get<pid_t>(), c.at("signal").get<int>());
      return ok();
    }
    if (op == "port") return ok({{"port", free_tcp_port()}});
    if (op == "apply") return op_apply(c);
    if (op == "revert") return op_revert(c);
    if (op == "node_state") return op_node_state();
    if (op == "stop") return op_stop();
    if (op == "telemetry_open") return op_telemetry_open(c);
    if (op == "telemetry_start") return op_telemetry_start(c);
    if (op == "telemetry_stop") return ok({{"mesh", telemetry_ ? telemetry_->stop() : json()}});
    return {{"ok", false}, {"error", fmt::format("unknown command {}", op)}};
  } catch (const std::exception& e) {
    return {{"ok", false}, {"error", e.what()}};
  }
}

// The job's hosts and the interfaces faults may touch here. The interface network faults
// act on is the one that carries this host's traffic to its peers; it must be allowed.
json Agent::op_setup(const json& c) {
  addresses_ = c.at("addresses").get<std::vector<std::string>>();
  const auto allowed = c.at("interfaces").get<std::vector<std::string>>();
  if (options_.node >= static_cast<int>(addresses_.size())) throw std::runtime_error("setup: no address for this node");
  std::string route_why;
  interface_ = interface_towards(addresses_, options_.node, &route_why);
  make_cgroups(c);
  const bool needs_network = c.value("network_faults", false);
  if (needs_network) {
    if (interface_.empty()) throw std::runtime_error(route_why);
    if (std::find(allowed.begin(), allowed.end(), interface_) == allowed.end())
      throw std::runtime_error(fmt::format(
          "its traffic to the job's other hosts leaves by {}, which is not among the interfaces faults may touch "
          "there ({}); add it to the host's \"interfaces\" in the inventory", interface_,
          allowed.empty() ? std::string("none listed") : fmt::format("{}", fmt::join(allowed, ", "))));
    netns_ = own_netns();
    plane_ = faults::NetworkPlane::for_host(netns_.get(), interface_, addresses_, options_.node,
                                             c.value("seed", std::uint64_t{0}));
  }
  return ok({{"exe", common::self_exe()}, {"interface", interface_}, {"metrics", metrics_->address()},
             {"hostname", options_.host}});
}

// The node's cgroups on this host, with the controllers the run's faults need (freezer and
// pids always): a fault that needs one this host cannot give is refused here, at setup.
void Agent::make_cgroups(const json& c) {
  std::vector<std::string> controllers{"freezer", "pids"};
  const auto needed = c.contains("cgroups") ? c["cgroups"].get<std::vector<std::string>>() : std::vector<std::string>{};
  for (const auto& n : needed)
    if (std::find(controllers.begin(), controllers.end(), n) == controllers.end()) controllers.push_back(n);
  cgroups_ = std::make_unique<NodeCgroups>(1, fmt::format("{}-n{}", options_.run_id, options_.node), *journal_, controllers);
  for (const auto& n : needed)
    if (cgroups_->dir(0, n).empty())
      throw std::runtime_error(fmt::format("a fault needs the node's {} cgroup, which this host cannot give: {}", n,
                                           cgroups_->available() ? cgroups_->why_missing(n) : cgroups_->why_not()));
}

json Agent::op_start(const json& c) {
  ProcessSpec spec;
  spec.name = c.at("name").get<std::string>();
  spec.argv = c.at("argv").get<std::vector<std::string>>();
  spec.env = c.at("env").get<std::map<std::string, std::string>>();
  spec.cwd = c.value("cwd", std::string());
  spec.stdout_path = c.value("stdout", std::string());
  spec.stderr_path = c.value("stderr", std::string());
  const int rank = c.value("rank", -1);
  if (spec.argv.empty()) throw std::runtime_error("start: empty argv");
  if (spec.argv[0] == kAgentSelfExe) spec.argv[0] = common::self_exe();
  for (const auto* path : {&spec.stdout_path, &spec.stderr_path})
    if (!path->empty()) std::filesystem::create_directories(std::filesystem::path(*path).parent_path());
  spec.env["CHAOSBENCH_METRICS"] = metrics_->address();
  spec.env[kProcessMarkerEnv] = journal_->process_marker();
  if (auto it = spec.env.find(CB_CONTROL_ENV); it != spec.env.end() && it->second.starts_with(kAgentControlPrefix))
    it->second = control_block(rank);
  const pid_t pid = supervisor_.start(spec);
  rank_of_[pid] = rank;
  return ok({{"pid", pid}});
}

std::string Agent::control_block(int rank) {
  const std::string dir = runtime_dir_ + "/control";
  const std::string path = faults::control_path(dir, rank);
  if (control_fds_.count(rank)) return path;
  std::filesystem::create_directories(dir);
  const int fd = common::FaultControl::create(path, static_cast<std::uint64_t>(rank));
  if (fd < 0) throw std::runtime_error(fmt::format("cannot create the fault control block {}: {}", path, std::strerror(errno)));
  control_fds_.emplace(rank, common::UniqueFd(fd));
  return path;
}

// The target as the controller resolved it, with this host's processes of its ranks.
json Agent::op_apply(const json& c) {
  const auto id = c.at("fault").get<std::uint64_t>();
  const std::string type = c.at("type").get<std::string>();
  const auto* info = faults::find_fault_type(type);
  if (!info) throw std::runtime_error(fmt::format("unknown fault type {} (a different chaosbench?)", type));
  faults::ResolvedTarget target = decode_target(c.at("target"));
  // Each pid with its start time: the undo a fault journals (SIGCONT after a pause) acts
  // only on the same process, never on one that reused its number.
  for (int rank : target.ranks)
    for (const auto& [pid, r] : rank_of_)
      if (r == rank && supervisor_.status(pid).running) {
        const auto st = read_proc_stat(pid);
        target.pids.push_back(pid);
        target.pid_start_times.push_back(st ? st->start_time : 0);
      }
  target.network = plane_.get();
  // This node's cgroups, when the target names it (node index 0 of the agent's own).
  if (cgroups_ && cgroups_->available() &&
      std::find(target.nodes.begin(), target.nodes.end(), options_.node) != target.nodes.end()) {
    target.cgroup_version = cgroups_->version();
    for (const char* controller : {"cpu", "memory", "freezer", "pids"})
      if (auto dir = cgroups_->dir(0, controller); !dir.empty()) target.cgroups[controller].push_back(dir);
  }
  target.control_dir = runtime_dir_ + "/control";
  auto fault = info->make(decode_params(c.at("params")));
  fault->apply(target, *journal_);
  common::crash_point("agent.applied");  // in effect, the controller not yet told
  json reply = ok({{"backend", fault->backend()}, {"ended", fault->ended_processes()}});
  faults_[id] = std::move(fault);
  return reply;
}

json Agent::op_revert(const json& c) {
  const auto id = c.at("fault").get<std::uint64_t>();
  auto it = faults_.find(id);
  if (it == faults_.end()) return ok();  // idempotent
  it->second->revert();
  json reply = ok({{"effect", it->second->effect()}});
  faults_.erase(it);
  return reply;
}

// Everything stopped and reverted; the reply carries how each process ended.
json Agent::op_stop() {
  json reply = ok({{"errors", stop_everything()}});
  json processes = json::array();
  for (const auto& [pid, rank] : rank_of_) {
    const auto& s = supervisor_.status(pid);
    processes.push_back({{"pid", pid}, {"exit_code", s.exit_code ? json(*s.exit_code) : json()},
                         {"signal", s.signal ? json(*s.signal) : json()}});
  }
  reply["processes"] = std::move(processes);
  return reply;
}

// The node's end of the link mesh and its telemetry (agent_telemetry.h): opened here, its
// mesh port in the reply, started once the controller has every node's port.
json Agent::op_telemetry_open(const json& c) {
  if (stopped_) throw std::runtime_error("telemetry_open: after stop");
  if (telemetry_) throw std::runtime_error("telemetry_open: already open");
  if (addresses_.empty()) throw std::runtime_error("telemetry_open: before setup");
  // The protocol's lines carry a rank; the telemetry frame says whose they really are (the
  // controller files them as its own samples, rank -1).
  telemetry_ = std::make_unique<AgentTelemetry>(c, options_.node, addresses_, cgroups_.get(), [this](bench::Sample s) {
    s.rank = 0;
    queue_line(bench::encode_record(s), true);
  });
  return ok({{"port", telemetry_->port()}, {"mesh_error", telemetry_->mesh_error()},
             {"telemetry_error", telemetry_->telemetry_error()}});
}

json Agent::op_telemetry_start(const json& c) {
  if (stopped_) throw std::runtime_error("telemetry_start: after stop");
  if (!telemetry_) throw std::runtime_error("telemetry_start: not open");
  std::vector<int> ports;
  for (const auto& p : c.at("ports")) {
    if (!p.is_number_integer() || p.get<std::int64_t>() < 0 || p.get<std::int64_t>() > 65535)
      throw std::runtime_error("telemetry_start: a port is not an integer 0..65535");
    ports.push_back(p.get<int>());
  }
  telemetry_->start(ports);
  return ok();
}

json Agent::op_node_state() {
  const bool have = cgroups_ && cgroups_->available();
  return ok({{"frozen", have && node_frozen(*cgroups_, 0)}, {"oom_killed", have && node_oom_killed(*cgroups_, 0)}});
}

}  // namespace chaosbench::harness

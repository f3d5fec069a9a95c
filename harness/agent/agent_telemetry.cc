#include "harness/agent/agent_telemetry.h"

#include <fmt/format.h>
#include <stdexcept>

#include "harness/cluster/node_identity.h"

namespace chaosbench::harness {

using json = nlohmann::json;

namespace {

// The scenario's bounds (docs/scenario-format.md "mesh"): a controller of this version
// sends nothing else, so anything past them is a broken or foreign controller.
common::Duration window_of(const json& c) {
  const auto ms = c.at("window_ms").get<std::int64_t>();
  if (ms < 200 || ms > 60'000) throw std::runtime_error(fmt::format("telemetry: window_ms {} is not 200..60000", ms));
  return common::Duration{std::chrono::milliseconds(ms)};
}

std::uint64_t token_of(const json& mesh) {
  const auto text = mesh.at("token").get<std::string>();
  std::uint64_t token = 0;
  for (char ch : text) {
    const int digit = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
    if (digit < 0) throw std::runtime_error("telemetry: the mesh token is not 16 lower-case hex digits");
    token = (token << 4) | static_cast<std::uint64_t>(digit);
  }
  if (text.size() != 16 || token == 0) throw std::runtime_error("telemetry: the mesh token is not 16 hex digits, not all 0");
  return token;
}

}  // namespace

AgentTelemetry::AgentTelemetry(const json& c, int node, const std::vector<std::string>& addresses,
                               const NodeCgroups* cgroups, Sink sink)
    : node_(node), nodes_(addresses.size()) {
  if (node < 0 || static_cast<std::size_t>(node) >= addresses.size())
    throw std::runtime_error("telemetry: this node is not among the job's addresses (no setup?)");
  const common::Duration window = window_of(c);
  if (c.contains("mesh") && c["mesh"].is_object()) {
    MeshSpec spec;
    spec.rate = c["mesh"].at("rate").get<double>();
    spec.window = window;
    if (!(spec.rate >= 0.5 && spec.rate <= 100)) throw std::runtime_error("telemetry: mesh rate is not 0.5..100");
    std::vector<MeshNode> peers;
    for (std::size_t i = 0; i < addresses.size(); ++i)
      peers.push_back({-1, addresses[i], NodeIdentity::hostname(static_cast<int>(i)), static_cast<int>(i) == node, 0});
    try {
      // User stamps: a host's network faults hold what it receives after the kernel's stamp
      // (link_mesh.h).
      mesh_ = std::make_unique<LinkMesh>(std::move(peers), spec, sink, token_of(c["mesh"]), MeshStamps::kUser);
    } catch (const std::runtime_error& e) {
      mesh_error_ = e.what();
    }
  }
  const std::string pids = cgroups && cgroups->available() ? cgroups->dir(0, "pids") : std::string();
  if (pids.empty()) {
    telemetry_error_ = "no pids cgroup for the node on this host: no list of its threads";
    return;
  }
  const bool v2 = cgroups->version() == 2;
  NodeTelemetrySource s;
  s.name = NodeIdentity::hostname(node);
  s.threads_file = pids + (v2 ? "/cgroup.threads" : "/tasks");
  if (auto cpu = cgroups->dir(0, "cpu"); !cpu.empty()) s.cpu_stat = cpu + "/cpu.stat";
  if (auto mem = cgroups->dir(0, "memory"); !mem.empty()) s.memory_usage = mem + (v2 ? "/memory.current" : "/memory.usage_in_bytes");
  telemetry_ = std::make_unique<NodeTelemetry>(std::vector<NodeTelemetrySource>{std::move(s)}, window, std::move(sink),
                                               NodeIdentity::hostname(node));
}

AgentTelemetry::~AgentTelemetry() { stop(); }

void AgentTelemetry::start(const std::vector<int>& ports) {
  if (started_) throw std::runtime_error("telemetry: already started");
  if (ports.size() != nodes_) throw std::runtime_error(fmt::format("telemetry: {} ports for {} nodes", ports.size(), nodes_));
  for (int port : ports)
    if (port < 0 || port > 65535) throw std::runtime_error(fmt::format("telemetry: port {} out of range", port));
  if (mesh_)
    for (std::size_t i = 0; i < nodes_; ++i)
      if (static_cast<int>(i) != node_) mesh_->set_peer_port(i, static_cast<std::uint16_t>(ports[i]));
  started_ = true;
  if (mesh_) mesh_->start();
  if (telemetry_) telemetry_->start();
}

json AgentTelemetry::stop() {
  if (telemetry_) telemetry_->stop();
  if (!mesh_) return {{"probes", 0}, {"echoes", 0}, {"refused", 0}, {"cpu_s", 0.0}, {"wall_s", 0.0}};
  mesh_->stop();
  return {{"probes", mesh_->probes_sent()}, {"echoes", mesh_->echoes_received()}, {"refused", mesh_->refused()},
          {"cpu_s", mesh_->cpu_seconds()}, {"wall_s", mesh_->wall_seconds()}};
}

}  // namespace chaosbench::harness

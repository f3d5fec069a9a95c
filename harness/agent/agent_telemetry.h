// An agent's share of the run's own measurements across hosts (docs/diagnosis.md): its
// node's end of the link mesh, probing every other node's agent over the hosts' network,
// and its node's telemetry (node/cpu_usage, cpu_wait, cpu_throttled, memory_used, and
// host/cpu_steal labelled with the node). Every sample goes to the sink, which queues it
// as a metrics-protocol line for the controller, so the controller's store, live
// diagnosis and reports see what they see on one machine.
//
// Two steps, because the mesh's peers are the other agents: the constructor binds this
// node's socket (its port goes back to the controller), start() takes every node's port
// and starts. A part that cannot be made here is left out and said (mesh_error(),
// telemetry_error()); the other still runs.
//
// Threads: the agent's thread constructs, starts and stops; the mesh's and the
// telemetry's own threads call the sink, which must be thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "harness/cluster/node_cgroups.h"
#include "harness/collect/link_mesh.h"
#include "harness/collect/node_telemetry.h"

namespace chaosbench::harness {

class AgentTelemetry {
 public:
  using Sink = std::function<void(const bench::Sample&)>;

  // `command`: {"window_ms", "mesh": null | {"rate", "token"}} (docs/agent-protocol.md);
  // throws std::runtime_error for one out of range. `addresses`: the job's hosts by node
  // (setup); `cgroups`: the node's (index 0), or null.
  AgentTelemetry(const nlohmann::json& command, int node, const std::vector<std::string>& addresses,
                 const NodeCgroups* cgroups, Sink sink);
  ~AgentTelemetry();  // stop()
  AgentTelemetry(const AgentTelemetry&) = delete;
  AgentTelemetry& operator=(const AgentTelemetry&) = delete;

  // This node's mesh port (0: no mesh here) and why a part is missing ("" when it runs).
  std::uint16_t port() const { return mesh_ ? mesh_->port(static_cast<std::size_t>(node_)) : 0; }
  const std::string& mesh_error() const { return mesh_error_; }
  const std::string& telemetry_error() const { return telemetry_error_; }

  // `ports`: every node's mesh port by node (0: that node has none; it is not probed).
  // Throws std::runtime_error when the list does not fit the job. Once.
  void start(const std::vector<int>& ports);
  // Stops both and returns the mesh's own figures: {probes, echoes, refused, cpu_s,
  // wall_s} (zeros without a mesh). Idempotent.
  nlohmann::json stop();

 private:
  int node_;
  std::size_t nodes_;
  std::unique_ptr<LinkMesh> mesh_;
  std::unique_ptr<NodeTelemetry> telemetry_;
  std::string mesh_error_, telemetry_error_;
  bool started_ = false;
};

}  // namespace chaosbench::harness

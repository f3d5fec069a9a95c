// The run's own measurements of its nodes, blind to the fault list, which the diagnosis
// reads (docs/diagnosis.md): the link mesh (every pair's round trip and loss) and each
// node's CPU and memory telemetry, made here for nodes on this machine, or by the agents
// for nodes on other hosts. From bring-up to the unwind (before the nodes go: the mesh's
// sockets hold their namespaces). See run_collector.h for the contract.
#pragma once

#include <memory>

#include "harness/collect/link_mesh.h"
#include "harness/collect/node_telemetry.h"
#include "harness/run/run_collector.h"

namespace chaosbench::harness {

class RemoteSite;

class TelemetryCollector final : public RunCollector {
 public:
  // Without a word in the timeline: an unwind that threw is not the mesh's end to report.
  ~TelemetryCollector() override {
    mesh_.reset();
    node_telemetry_.reset();
  }

  void at(Stage stage, const RunContext& ctx) override;
  void stop() override;

  // Something measures the nodes (the live diagnosis has something to read).
  bool measuring() const { return mesh_ || node_telemetry_ || remote_; }

 private:
  void start_here(const RunContext& ctx);
  void start_node_telemetry(const RunContext& ctx);
  void start_remote(const RunContext& ctx, RemoteSite& remote);
  void mesh_stopped(double probes, double echoes, double refused, double cpu_s, double wall_s) const;

  const RunContext* ctx_ = nullptr;
  std::unique_ptr<LinkMesh> mesh_;                 // none when off or not namespaced
  std::unique_ptr<NodeTelemetry> node_telemetry_;  // none without node cgroups
  RemoteSite* remote_ = nullptr;                   // the agents measure
};

}  // namespace chaosbench::harness

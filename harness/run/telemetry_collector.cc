#include "harness/run/telemetry_collector.h"

#include "harness/cluster/node_identity.h"
#include "harness/run/run_environment.h"

namespace chaosbench::harness {
namespace {

using TL = TimelineLog;

}  // namespace

void TelemetryCollector::at(Stage stage, const RunContext& ctx) {
  if (stage != Stage::kBringUp) return;
  ctx_ = &ctx;
  if (RemoteSite* remote = ctx.env->remote()) return start_remote(ctx, *remote);
  start_here(ctx);
}

void TelemetryCollector::start_here(const RunContext& ctx) {
  RunEnvironment& env = *ctx.env;
  NodeSite& site = env.site();
  const int n = ctx.scenario.cluster.nodes;
  // The mesh probes the cluster's network: nodes in namespaces of this machine (on
  // loopback every pair is one kernel path).
  if (ctx.scenario.mesh.enabled && env.namespaced() && n >= 2) {
    std::vector<MeshNode> nodes;
    for (int i = 0; i < n; ++i) nodes.push_back({site.netns_fd(i), site.address(i), NodeIdentity::hostname(i)});
    try {
      SampleStore* store = &ctx.store;
      mesh_ = std::make_unique<LinkMesh>(std::move(nodes), ctx.scenario.mesh,
                                         [store](const bench::Sample& s) { store->add(s, bench::wall_time_now()); });
      mesh_->start();
    } catch (const std::runtime_error& e) {
      mesh_.reset();
      env.timeline().write(ctx.now_s(), "mesh_unavailable", {{"reason", TL::str(e.what())}});
    }
  }
  start_node_telemetry(ctx);
}

void TelemetryCollector::start_node_telemetry(const RunContext& ctx) {
  RunEnvironment& env = *ctx.env;
  const NodeCgroups* cg = env.cgroups();
  if (!cg) return;
  std::vector<NodeTelemetrySource> sources;
  const bool v2 = cg->version() == 2;
  for (int i = 0; i < ctx.scenario.cluster.nodes; ++i) {
    NodeTelemetrySource s;
    s.name = NodeIdentity::hostname(i);
    const std::string pids = cg->dir(i, "pids");
    if (pids.empty()) {
      env.timeline().write(ctx.now_s(), "node_telemetry_unavailable",
                           {{"reason", TL::str("no pids cgroup: no list of a node's threads")}});
      return;
    }
    s.threads_file = pids + (v2 ? "/cgroup.threads" : "/tasks");
    if (auto cpu = cg->dir(i, "cpu"); !cpu.empty()) s.cpu_stat = cpu + "/cpu.stat";
    if (auto mem = cg->dir(i, "memory"); !mem.empty()) s.memory_usage = mem + (v2 ? "/memory.current" : "/memory.usage_in_bytes");
    sources.push_back(std::move(s));
  }
  SampleStore* store = &ctx.store;
  node_telemetry_ = std::make_unique<NodeTelemetry>(std::move(sources), ctx.scenario.mesh.window,
                                                    [store](const bench::Sample& s) { store->add(s, bench::wall_time_now()); });
  node_telemetry_->start();
}

// Across hosts each agent measures its node (remote_site.h start_telemetry); the samples
// come back as records into the store, where the live diagnosis reads them as here.
void TelemetryCollector::start_remote(const RunContext& ctx, RemoteSite& remote) {
  const Scenario& s = ctx.scenario;
  const bool mesh = s.mesh.enabled && s.cluster.nodes >= 2 &&
                    s.cluster.mode != ClusterMode::kLocalAgents;  // one loopback: no network to probe
  std::vector<std::string> notes;
  if (remote.start_telemetry(s.mesh, mesh, &notes)) remote_ = &remote;
  for (const auto& note : notes) ctx.env->timeline().write(ctx.now_s(), "telemetry_unavailable", {{"reason", TL::str(note)}});
}

// The mesh's own cost, on this machine or summed over the agents: one timeline line.
void TelemetryCollector::mesh_stopped(double probes, double echoes, double refused, double cpu_s, double wall_s) const {
  ctx_->env->timeline().write(ctx_->now_s(), "mesh_stopped",
                              {{"probes", TL::num(probes)}, {"echoes", TL::num(echoes)}, {"refused", TL::num(refused)},
                               {"cpu_s", TL::num(cpu_s)}, {"wall_s", TL::num(wall_s)}});
}

void TelemetryCollector::stop() {
  if (mesh_) {
    mesh_->stop();
    mesh_stopped(static_cast<double>(mesh_->probes_sent()), static_cast<double>(mesh_->echoes_received()),
                 static_cast<double>(mesh_->refused()), mesh_->cpu_seconds(), mesh_->wall_seconds());
  }
  mesh_.reset();
  if (RemoteSite* remote = remote_) {
    remote_ = nullptr;
    const auto m = remote->stop_telemetry();
    if (m.is_object())
      mesh_stopped(m["probes"].get<double>(), m["echoes"].get<double>(), m["refused"].get<double>(),
                   m["cpu_s"].get<double>(), m["wall_s"].get<double>());
  }
  if (node_telemetry_) node_telemetry_->stop();
  node_telemetry_.reset();
}

}  // namespace chaosbench::harness

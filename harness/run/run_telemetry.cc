// The run's own measurements of its nodes: the link mesh (every pair's round trip and
// loss) and each node's CPU and memory telemetry, both blind to the fault list, which the
// diagnosis reads (docs/diagnosis.md).
#include <fmt/format.h>

#include "harness/cluster/node_identity.h"
#include "harness/run/run.h"

namespace chaosbench::harness {

using TL = TimelineLog;

void Run::start_telemetry() {
  NodeSite& site = env_->site();
  const int n = scenario_.cluster.nodes;
  if (RemoteSite* remote = env_->remote()) return start_remote_telemetry(*remote);
  auto sink = [this](const bench::Sample& s) { store_.add(s, bench::wall_time_now()); };
  // The mesh probes the cluster's network: nodes in namespaces of this machine (on
  // loopback every pair is one kernel path, and agents' hosts are another story).
  if (scenario_.mesh.enabled && env_->namespaced() && n >= 2) {
    std::vector<MeshNode> nodes;
    for (int i = 0; i < n; ++i) nodes.push_back({site.netns_fd(i), site.address(i), NodeIdentity::hostname(i)});
    try {
      mesh_ = std::make_unique<LinkMesh>(std::move(nodes), scenario_.mesh, sink);
      mesh_->start();
    } catch (const std::runtime_error& e) {
      mesh_.reset();
      env_->timeline().write(now_s(), "mesh_unavailable", {{"reason", TL::str(e.what())}});
    }
  }
  if (const NodeCgroups* cg = env_->cgroups()) {
    std::vector<NodeTelemetrySource> sources;
    const bool v2 = cg->version() == 2;
    for (int i = 0; i < n; ++i) {
      NodeTelemetrySource s;
      s.name = NodeIdentity::hostname(i);
      const std::string pids = cg->dir(i, "pids");
      if (pids.empty()) {
        env_->timeline().write(now_s(), "node_telemetry_unavailable",
                               {{"reason", TL::str("no pids cgroup: no list of a node's threads")}});
        return;
      }
      s.threads_file = pids + (v2 ? "/cgroup.threads" : "/tasks");
      if (auto cpu = cg->dir(i, "cpu"); !cpu.empty()) s.cpu_stat = cpu + "/cpu.stat";
      if (auto mem = cg->dir(i, "memory"); !mem.empty()) s.memory_usage = mem + (v2 ? "/memory.current" : "/memory.usage_in_bytes");
      sources.push_back(std::move(s));
    }
    node_telemetry_ = std::make_unique<NodeTelemetry>(std::move(sources), scenario_.mesh.window, sink);
    node_telemetry_->start();
  }
}

// Across hosts each agent measures its node (remote_site.h start_telemetry); the samples
// come back as records into the store, where the live diagnosis reads them as here.
void Run::start_remote_telemetry(RemoteSite& remote) {
  const bool mesh = scenario_.mesh.enabled && scenario_.cluster.nodes >= 2 &&
                    scenario_.cluster.mode != ClusterMode::kLocalAgents;  // one loopback: no network to probe
  std::vector<std::string> notes;
  remote_telemetry_ = remote.start_telemetry(scenario_.mesh, mesh, &notes);
  for (const auto& note : notes) env_->timeline().write(now_s(), "telemetry_unavailable", {{"reason", TL::str(note)}});
}

// Blind: it reads the store only. A culprit named is a harness event (the timeline shows
// it; diagnosis/time_to_localise is derived from it). Runs on the diagnosis's thread:
// harness_event writes only the store and the timeline, which are thread-safe.
void Run::start_live_diagnosis() {
  if (!mesh_ && !node_telemetry_ && !remote_telemetry_) return;
  diagnosis_ = std::make_unique<LiveDiagnosis>(store_, t0_wall_, scenario_.mesh.window.seconds(), [this](const reports::DiagnosisCulprit& c, int /*named so far*/) {
    harness_event("diagnosis_named", {{"class", c.cls}, {"component", c.component}, {"what", c.what},
                                      {"confidence", c.confidence}, {"abnormal_since_s", c.start_s}});
  });
  for (const auto& l : ranks_->launches()) diagnosis_->set_rank_node(l.rank, NodeIdentity::hostname(l.node));
  diagnosis_->start();
  diagnosed_ = true;
}

// The mesh's own cost, on this machine or summed over the agents: one timeline line.
void Run::mesh_stopped(double probes, double echoes, double refused, double cpu_s, double wall_s) {
  env_->timeline().write(now_s(), "mesh_stopped",
                         {{"probes", TL::num(probes)}, {"echoes", TL::num(echoes)}, {"refused", TL::num(refused)},
                          {"cpu_s", TL::num(cpu_s)}, {"wall_s", TL::num(wall_s)}});
}

void Run::stop_telemetry() {
  if (diagnosis_) diagnosis_->stop();
  diagnosis_.reset();
  if (mesh_) {
    mesh_->stop();
    mesh_stopped(static_cast<double>(mesh_->probes_sent()), static_cast<double>(mesh_->echoes_received()),
                 static_cast<double>(mesh_->refused()), mesh_->cpu_seconds(), mesh_->wall_seconds());
  }
  mesh_.reset();
  if (RemoteSite* remote = env_->remote(); remote && remote_telemetry_) {
    remote_telemetry_ = false;
    const auto m = remote->stop_telemetry();
    if (m.is_object())
      mesh_stopped(m["probes"].get<double>(), m["echoes"].get<double>(), m["refused"].get<double>(),
                   m["cpu_s"].get<double>(), m["wall_s"].get<double>());
  }
  if (node_telemetry_) node_telemetry_->stop();
  node_telemetry_.reset();
}

}  // namespace chaosbench::harness

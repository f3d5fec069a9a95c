// The run environment: everything a run makes on the host before its workload starts and
// takes down after it ends, in that order: the journal, the output directory (and the
// private runtime directory), the timeline, each node's cgroups, the cluster network and
// the node site on top of them. Each is journaled before it is made, so a crash at any
// point leaves nothing `chaosbench cleanup` cannot find.
// Threads: the run's thread only.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "harness/cluster/node_cgroups.h"
#include "harness/journal/journal.h"
#include "harness/site/cluster_network.h"
#include "harness/agent/agent_hub.h"
#include "harness/site/local_site.h"
#include "harness/site/remote_site.h"
#include "harness/core/run_stamps.h"
#include "harness/run/run_directory.h"
#include "harness/run/runner.h"
#include "harness/collect/timeline_log.h"

namespace chaosbench::harness {

class RunEnvironment {
 public:
  // Brings everything up for `scenario`; `now_s` stamps the timeline. Throws HostError
  // (exit 3) before any process starts when the host cannot give a fault what it needs
  // (namespaces, a cgroup controller) or a place cannot be made; what was made by then
  // is undone by the destructors, through the journal. In the agent modes the nodes are
  // agents (remote_site.h): no cgroups or namespaces are made here, and `records`
  // receives what the ranks on the hosts report (on the hub's thread).
  RunEnvironment(const Scenario& scenario, const RunOptions& options, const std::string& run_id,
                 const std::function<double()>& now_s, AgentHub::RecordSink records);
  ~RunEnvironment();
  RunEnvironment(const RunEnvironment&) = delete;
  RunEnvironment& operator=(const RunEnvironment&) = delete;

  // Takes down what bring-up made, newest first; the journal confirms each step and is
  // removed last. Returns what could not be undone. Call once, after site().stop_all():
  // the processes go first. The timeline stays open for the run's last line, and the
  // stopped site object until destruction (the run's units hold it; none may call it).
  std::vector<std::string> tear_down();

  const std::string& out() const { return out_; }  // absolute; stays after tear_down()
  // The private runtime directory (sockets, control blocks); gone after tear_down().
  const std::string& runtime() const { return dir_->runtime(); }
  const std::string& started_at() const { return started_at_; }
  TimelineLog& timeline() { return *timeline_; }
  NodeSite& site() { return *site_; }
  bool namespaced() const { return namespaced_; }
  // The nodes' cgroups, or null where none could be made (or the nodes are agents').
  const NodeCgroups* cgroups() const { return cgroups_available_ ? cgroups_.get() : nullptr; }
  // The site of agents, or null when the nodes are on this machine.
  const RemoteSite* remote() const { return remote_; }
  RemoteSite* remote() { return remote_; }
  // How the cluster was made, for results.json's environment.cluster.
  std::string description() const;

 private:
  void make_node_cgroups(const Scenario& scenario, const std::string& run_id);
  void check_faults_can_run(const Scenario& scenario) const;

  // Declared before everything it records, so it is destroyed after them.
  std::unique_ptr<Journal> journal_;
  std::unique_ptr<RunDirectory> dir_;
  std::unique_ptr<TimelineLog> timeline_;
  std::unique_ptr<NodeCgroups> cgroups_;
  std::unique_ptr<ClusterNetwork> cluster_;  // namespaces or loopback, node names, the network plane
  std::unique_ptr<NodeSite> site_;
  RemoteSite* remote_ = nullptr;  // site_, when it is one
  std::string out_;
  std::string started_at_;
  bool namespaced_ = false;
  bool cgroups_available_ = false;
  int cgroup_version_ = 1;
  std::string cgroup_list_;
  std::string cgroups_why_not_;
};

}  // namespace chaosbench::harness

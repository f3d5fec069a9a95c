// Recovery: what the run does when a rank fails or a fault ends ranks, by
// workload.recovery.mode:
//   restart  every rank is stopped and started again (attempt + 1), as torchrun does:
//            when the failed node is back (the fault's restart_after), on the remaining
//            nodes when it is not and recovery.min_nodes allows, at most max_restarts
//            times; also when no rank reported anything for recovery.hang_timeout;
//   elastic  the workload carries on; ranks a fault ended with restart_after are started
//            again when it says, and join;
//   none     a failed rank fails the run (the run judges that, not this unit).
// Ranks a fault ended with restart_after come back in every mode. It acts through the
// rank table, the node site and the fault driver (repairs before a restart), and the
// run's hooks for what only the run knows (a rank's full process spec, the plan).
// Threads: the run's thread only.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bench/protocol/record.h"
#include "harness/run/fault_driver.h"
#include "harness/site/node_site.h"
#include "harness/run/rank_table.h"
#include "harness/scenario/scenario.h"

namespace chaosbench::harness {

class Recovery {
 public:
  struct Hooks {
    std::function<double()> now;                                   // seconds since the workload started
    std::function<void(std::size_t launch)> start_rank;            // starts one launch of the rank table
    std::function<void(const std::vector<int>& nodes)> replan;     // plans every rank on `nodes` (attempt())
    std::function<void(const std::string& name, bench::Labels fields)> event;  // a harness event
    std::function<void(const std::string& reason)> fail;          // the run fails
  };

  // Borrows everything; `nodes` is the cluster's node count.
  Recovery(const RecoverySpec& spec, int nodes, RankTable& ranks, NodeSite& site, FaultDriver& faults, Hooks hooks);

  // A fault took effect: ranks it ended come back at its restart_after, or their nodes are
  // down for good.
  void on_fault(const FaultEffect& effect);
  // A rank failed in restart mode: every rank stops and all start again, once the nodes
  // killed with restart_after are back.
  void on_rank_failed(const std::string& reason);
  // Does what is due at `t`: single-rank restarts, the restart of every rank (SIGKILL for
  // ranks past their grace, then the new attempt), and the hang check. `last_event_s` is
  // when any rank last reported anything (seconds since the workload started), nullopt
  // before anything was.
  void tick(double t, std::optional<double> last_event_s);

  const RecoverySpec& spec() const { return spec_; }
  int attempt() const { return attempt_; }
  double attempt_started_s() const { return attempt_started_s_; }
  bool restarting() const { return group_restart_at_.has_value(); }
  // Whether a restart of ranks is pending (single ranks or every rank).
  bool restart_pending() const { return group_restart_at_ || !pending_.empty(); }
  // Whether a pending single-rank restart includes a launch for which `pred` holds.
  bool pending_any(const std::function<bool(std::size_t)>& pred) const;

 private:
  struct PendingRestart {
    double at_s;
    std::vector<std::size_t> launches;
    std::string fault;
    // A reversible fault whose restart_after is the repair (a GPU reset): reverted just
    // before the ranks start again.
    std::optional<std::size_t> repair;
  };
  void restart_due(double t);
  void group_restart_due(double t);
  void check_hang(double t, std::optional<double> last_event_s);
  void begin_group_restart(const std::string& reason, double at_s);
  void absorb_pending(double& at_s);

  RecoverySpec spec_;
  int nodes_;
  RankTable& ranks_;
  NodeSite& site_;
  FaultDriver& faults_;
  Hooks hooks_;
  std::vector<PendingRestart> pending_;
  std::vector<std::size_t> repairs_before_group_restart_;
  int attempt_ = 0;
  double attempt_started_s_ = 0;
  std::optional<double> group_restart_at_;  // a restart of every rank is due then
  std::optional<double> group_kill_at_;     // ranks stopped for it that still run get SIGKILL then
  std::set<int> nodes_down_;                // killed without restart_after: never back
};

}  // namespace chaosbench::harness

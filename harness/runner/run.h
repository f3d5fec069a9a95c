// One run of a scenario, as the runner drives it: the cluster, the workload's processes,
// the fault schedule and recovery, and the records results.json is built from. Internal to
// harness/runner: run_lifecycle.cc holds the run's story (bring-up, the main loop,
// unwinding, the outcome); runner.cc the steps it takes (ranks, faults, exits);
// cluster_network.cc the network it runs on; run_recovery.cc what happens when a rank
// fails (restart of every rank, re-admission, hangs).
// Threads: one, the caller of execute(); the metrics server's thread touches only the
// store and the timeline, which are thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/unique_fd.h"
#include "faults/fault.h"
#include "harness/cli/exit_code.h"
#include "faults/network/network_plane.h"
#include "harness/cluster/node_cgroups.h"
#include "harness/journal/journal.h"
#include "harness/runner/cluster_network.h"
#include "harness/runner/fault_schedule.h"
#include "harness/runner/metrics_server.h"
#include "harness/runner/process_supervisor.h"
#include "harness/runner/progress_line.h"
#include "harness/runner/run_directory.h"
#include "harness/runner/runner.h"
#include "harness/runner/sample_store.h"
#include "harness/runner/target_resolver.h"
#include "harness/runner/timeline_log.h"
#include "harness/runner/workload_launcher.h"
#include "reports/judgement.h"
#include "reports/run_model.h"

namespace chaosbench::harness {

class Run {
 public:
  Run(const Scenario& s, const RunOptions& o) : scenario_(s), options_(o), schedule_(s.faults) {
    // chaosbench forks nothing but the workload, so every other child it has at the end
    // is an orphaned workload descendant: none may outlive the run.
    supervisor_.set_kill_adopted_orphans(true);
    // Journal each rank's process group and put it in its node's cgroups before it may
    // exec (see ProcessSupervisor::set_on_forked): nothing of it runs unrecorded or outside.
    supervisor_.set_on_forked([this](pid_t pid) {
      std::string cgroup;  // the node's cgroup it joins: cleanup's proof of the run's orphans
      for (const char* c : {"freezer", "pids", "cpu", "memory"})
        if (cgroup.empty() && cgroups_ && cgroups_->available()) cgroup = cgroups_->dir(starting_node_, c);
      process_entries_.push_back(journal_->record_process_group(pid, cgroup));
      if (cgroups_ && cgroups_->available()) cgroups_->join(starting_node_, pid);
    });
  }

  // The run's story: check the host, bring up, loop, unwind, report (run_lifecycle.cc).
  RunOutcome execute();

 private:
  // run_lifecycle.cc: the phases of execute().
  void check_host_can_run() const;
  std::string bring_up();
  void make_node_cgroups();
  void prepare_fault_records();
  bool main_loop();
  bool wait_for_events();
  void unwind(bool timed_out);
  RunOutcome outcome(const std::string& started_at, double end_s);

  double now_s() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count(); }
  void start_workload();
  void start_rank(std::size_t launch);
  void create_control_blocks();
  void restart_due(double t);
  // run_recovery.cc
  void on_rank_failed(const std::string& reason);
  void begin_group_restart(const std::string& reason, double at_s);
  void group_restart_due(double t);
  void check_hang(double t);
  void harness_event(const std::string& name, bench::Labels fields);
  std::string progress_text(double t) const;
  void start_metrics_server();
  void apply(std::size_t occurrence);
  void revert(std::size_t occurrence);
  void revert_all();
  void on_exit(pid_t pid);
  bool oom_killed(int rank) const;
  bool node_frozen(int node) const;
  bool only_services_left() const;  // every driver (non-service) process has ended
  void fail(std::string reason, reports::Verdict verdict = reports::Verdict::kFail);
  std::vector<RankProcess> rank_processes() const;

  const Scenario& scenario_;
  RunOptions options_;
  FaultSchedule schedule_;
  std::string run_id_ = make_run_id();
  std::string out_dir_;
  // Declared before everything it records, so it is destroyed after them.
  std::unique_ptr<Journal> journal_;
  std::vector<std::uint64_t> process_entries_;
  std::unique_ptr<RunDirectory> dir_;
  std::unique_ptr<NodeCgroups> cgroups_;
  std::unique_ptr<ClusterNetwork> cluster_;  // namespaces or loopback, node names, the network plane
  int starting_node_ = 0;  // the node of the rank being started, for the fork hook
  bool cgroups_available_ = false;
  int cgroup_version_ = 1;
  bool netns_used_ = false;
  std::string cgroup_list_;
  std::string cgroups_why_not_;
  std::unique_ptr<TimelineLog> timeline_;
  SampleStore store_;
  std::unique_ptr<MetricsServer> server_;
  ProcessSupervisor supervisor_;
  std::vector<RankLaunch> launches_;
  std::vector<pid_t> pids_;     // by launch index: the rank's current process
  std::vector<int> restarts_;   // by launch index
  std::vector<reports::ProcessRecord> processes_;  // every process started, restarts included
  std::map<pid_t, std::size_t> record_of_pid_;     // index into processes_
  std::set<pid_t> expected_exits_;                  // ended by a fault on purpose
  struct PendingRestart {
    double at_s;
    std::vector<std::size_t> launches;
    std::string fault;
    // A reversible fault whose restart_after is the repair (a GPU reset): reverted just
    // before the ranks start again.
    std::optional<std::size_t> revert_occurrence;
  };
  std::vector<std::size_t> reverts_before_restart_;  // the same, for a restart of every rank
  void absorb_pending_restarts(double& at_s);
  std::vector<PendingRestart> pending_restarts_;
  // Recovery (workload.recovery): restart mode stops every rank on a failure and starts
  // them all again, attempt + 1, once the failed node is back.
  RecoverySpec recovery_;
  LaunchContext launch_ctx_;
  std::optional<reports::BlasRecord> blas_;  // the workers' BLAS kernel and the CPU's peak
  int attempt_ = 0;
  std::optional<double> group_restart_at_;  // a restart of every rank is due then
  std::optional<double> group_kill_at_;     // ranks stopped for it that still run get SIGKILL then
  std::set<int> nodes_down_;                // killed without restart_after: never back
  double attempt_started_s_ = 0;
  bool unwinding_ = false;
  std::string control_dir_;  // the ranks' GPU fault control blocks (links to control_fds_)
  std::vector<common::UniqueFd> control_fds_;  // their sealed memfds, open for the whole run
  std::string interposer_;   // libchaosbench_cuda.so to preload, or ""
  std::unique_ptr<ProgressLine> progress_;  // the loop ended: exits from here on are the harness's doing
  std::vector<std::unique_ptr<faults::Fault>> faults_;  // by occurrence
  std::vector<reports::FaultRecord> fault_records_;     // by occurrence
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
  // Read by the metrics server thread (event times), written once before ranks start.
  std::atomic<double> t0_wall_{bench::wall_time_now()};
  reports::Judgement verdict_;  // folded by fail() and an interruption (reports/judgement.h)
  VerdictSource verdict_source_ = VerdictSource::kThisRun;
  std::optional<double> first_failure_s_;
};

}  // namespace chaosbench::harness

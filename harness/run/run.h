// One run of a scenario, as the runner drives it. Run ties the units together and tells
// the run's story (run_lifecycle.cc); each unit has one job:
//   RunEnvironment  journal, output directory, timeline, node cgroups, cluster network
//                   and the node site: bring-up and tear-down (run_environment.h);
//   NodeSite        everything done to a node: processes, control blocks, faults, what a
//                   node reports (node_site.h; LocalSite for this machine);
//   FaultDriver     the fault timeline applied and reverted, fault records (fault_driver.h);
//   RankTable       the ranks, their processes and process records (rank_table.h);
//   Recovery        restarts by workload.recovery, hangs (recovery.h);
//   the metrics intake (MetricsServer into the SampleStore) and the verdict (run_verdict.h);
//   the collectors that watch the run from beside it (run_collector.h: telemetry, the
//   live diagnosis, scrapes, probes, the kill switch, --metrics-listen, --grafana), in
//   one list, told of the run's stages and its fault timeline (run_collectors.cc).
// Run itself (runner.cc) starts the workload, judges each exit and keeps the verdict.
// Threads: one, the caller of execute(); the metrics server's thread and the collectors'
// threads touch only the store, the timeline and live_, which are thread-safe, and read
// t0_wall_.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/run/fault_driver.h"
#include "harness/collect/live_status.h"
#include "harness/collect/metrics_server.h"
#include "harness/run/progress_line.h"
#include "harness/run/rank_table.h"
#include "harness/run/recovery.h"
#include "harness/run/run_collector.h"
#include "harness/run/run_context.h"
#include "harness/run/run_environment.h"
#include "harness/run/run_verdict.h"
#include "harness/run/runner.h"
#include "harness/collect/sample_store.h"
#include "harness/plan/workload_launcher.h"
#include "harness/workloads/workload_plan.h"
#include "reports/model/judgement.h"
#include "reports/model/run_model.h"

namespace chaosbench::harness {

class Run {
 public:
  Run(const Scenario& s, const RunOptions& o) : scenario_(s), options_(o) {}
  // Stops the site first when a run unwinds by exception: no thread of it (the agents'
  // hub) may outlive the members it writes into.
  ~Run();

  // The run's story: check the host, bring up, loop, unwind, report (run_lifecycle.cc).
  RunOutcome execute();

 private:
  // run_lifecycle.cc: the phases of execute().
  void check_host_can_run() const;
  void bring_up();
  bool main_loop();
  bool wait_for_events();
  void unwind(bool timed_out);
  RunOutcome outcome(double end_s);

  // runner.cc: the steps.
  double now_s() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count(); }
  void start_metrics_server();
  void take_record(const bench::Record& r, double received);
  void start_workload();
  void start_rank(std::size_t launch);
  void apply_due(double t);
  void on_exit(pid_t pid);
  bool oom_killed(int rank) const;
  bool only_services_left() const;  // every driver (non-service) process has ended
  std::string progress_text(double t) const;
  void harness_event(const std::string& name, bench::Labels fields);
  Recovery::Hooks recovery_hooks();
  // run_collectors.cc: the collectors, the stop condition and the steady state.
  void make_collectors();
  void collectors_at(RunCollector::Stage stage);
  void stop_collectors(bool last);
  bool steady_before_first_fault(double t);  // false: every fault was skipped
  void tell_faults_finished();
  bool abort_requested(double t);            // true: the run is to stop now (recorded)
  void note_abort_reverted();
  void on_fault_transition(const FaultTransition& t);

  const Scenario& scenario_;
  RunOptions options_;
  std::string run_id_ = make_run_id();
  // Declared before env_: the agents' hub (in env_'s site) writes into it until env_ goes.
  SampleStore store_;
  std::unique_ptr<RunEnvironment> env_;
  std::unique_ptr<MetricsServer> server_;
  std::vector<PlannedOccurrence> plan_;  // the realised fault schedule, drawn in bring_up
  std::unique_ptr<FaultDriver> faults_;
  std::unique_ptr<RankTable> ranks_;
  std::unique_ptr<Recovery> recovery_;
  std::optional<reports::AbortRecord> abort_;       // set when the run stopped itself
  bool steady_checked_ = false;                     // the collectors were asked before the first fault
  bool told_faults_finished_ = false;
  LaunchContext launch_ctx_;
  std::unique_ptr<WorkloadPlan> workload_ = make_workload_plan(scenario_);  // what its kind decides
  std::optional<reports::BlasRecord> blas_;  // the workers' BLAS kernel and the CPU's peak
  std::string interposer_;   // libchaosbench_cuda.so to preload, or ""
  bool unwinding_ = false;   // exits from here on are the harness's doing
  std::unique_ptr<ProgressLine> progress_;
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
  // When this run began (before its journal): a kill switch file older than it is stale.
  const double began_wall_ = bench::wall_time_now();
  // Read by the metrics server thread (event times), written once before ranks start.
  std::atomic<double> t0_wall_{bench::wall_time_now()};
  RunVerdict verdict_;
  LiveStatus live_{run_id_, scenario_.name, scenario_.faults};
  // What the collectors see of the run (run_context.h).
  RunContext ctx_{scenario_, options_, run_id_, store_, live_, t0_wall_, began_wall_};
  // Last, so they go first: their threads read or write the members above.
  std::vector<std::unique_ptr<RunCollector>> collectors_;
};

}  // namespace chaosbench::harness

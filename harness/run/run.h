// One run of a scenario, as the runner drives it. Run ties the units together and tells
// the run's story (run_lifecycle.cc); each unit has one job:
//   RunEnvironment  journal, output directory, timeline, node cgroups, cluster network
//                   and the node site: bring-up and tear-down (run_environment.h);
//   NodeSite        everything done to a node: processes, control blocks, faults, what a
//                   node reports (node_site.h; LocalSite for this machine);
//   FaultDriver     the fault timeline applied and reverted, fault records (fault_driver.h);
//   RankTable       the ranks, their processes and process records (rank_table.h);
//   Recovery        restarts by workload.recovery, hangs (recovery.h);
//   the metrics intake (MetricsServer into the SampleStore) and the verdict (run_verdict.h).
// Run itself (runner.cc) starts the workload, judges each exit and keeps the verdict.
// Threads: one, the caller of execute(); the metrics server's thread and the scraper's
// threads touch only the store and the timeline, which are thread-safe; the probe
// engine's threads read the store and write the timeline and live_ (probe results).
// Read live (run_exposure.cc): the --metrics-listen listener's thread reads the store,
// live_ and t0_wall_; the --grafana poster's thread writes live_ and the timeline.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/grafana/annotation_poster.h"
#include "harness/prometheus/metrics_listener.h"
#include "harness/prometheus/scraper.h"
#include "harness/run/fault_driver.h"
#include "harness/run/kill_switch.h"
#include "harness/collect/link_mesh.h"
#include "harness/derive/live_diagnosis.h"
#include "harness/collect/live_status.h"
#include "harness/collect/metrics_server.h"
#include "harness/collect/node_telemetry.h"
#include "harness/probes/probe_engine.h"
#include "harness/run/progress_line.h"
#include "harness/run/rank_table.h"
#include "harness/run/recovery.h"
#include "harness/run/run_environment.h"
#include "harness/run/run_verdict.h"
#include "harness/run/runner.h"
#include "harness/collect/sample_store.h"
#include "harness/plan/workload_launcher.h"
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
  // run_scrape.cc: the scenario's Prometheus scrapes, from the workload's start to the unwind.
  void start_scraper();
  void stop_scraper();

  // run_probes.cc: the live probes, the stop condition and the kill switch.
  void make_probes();
  bool steady_before_first_fault(double t);  // false: every fault was skipped
  void tell_probes_fault_state();
  bool abort_requested(double t);            // true: the run is to stop now (recorded)
  void note_abort_reverted();
  void probe_result(const ProbeSpec& spec, const reports::ProbeTransition& r, bool changed);

  // run_telemetry.cc: the link mesh and the nodes' telemetry, from bring-up to the unwind.
  void start_telemetry();
  void start_remote_telemetry(RemoteSite& remote);
  void stop_telemetry();
  void mesh_stopped(double probes, double echoes, double refused, double cpu_s, double wall_s);
  void start_live_diagnosis();  // when the workload starts (its time origin)

  // run_exposure.cc: the live state and who reads it (--metrics-listen, --grafana).
  void start_listener();
  void start_live_outputs();
  void on_fault_transition(const FaultTransition& t);
  std::string render_exposition() const;
  void finish_annotations();

  const Scenario& scenario_;
  RunOptions options_;
  std::string run_id_ = make_run_id();
  // Declared before env_: the agents' hub (in env_'s site) writes into it until env_ goes.
  SampleStore store_;
  std::unique_ptr<RunEnvironment> env_;
  // After env_ and store_: its threads write into both until it is destroyed (stopped).
  std::unique_ptr<prometheus::Scraper> scraper_;
  std::unique_ptr<MetricsServer> server_;
  std::unique_ptr<LinkMesh> mesh_;                 // none when off or not namespaced
  std::unique_ptr<NodeTelemetry> node_telemetry_;  // none without node cgroups
  std::unique_ptr<LiveDiagnosis> diagnosis_;       // none without the mesh and the node telemetry
  bool remote_telemetry_ = false;                  // the agents measure (start_remote_telemetry)
  bool diagnosed_ = false;                         // the live diagnosis ran
  std::vector<PlannedOccurrence> plan_;  // the realised fault schedule, drawn in bring_up
  std::unique_ptr<FaultDriver> faults_;
  std::unique_ptr<RankTable> ranks_;
  std::unique_ptr<Recovery> recovery_;
  std::unique_ptr<ProbeEngine> probes_;             // none without probes
  std::unique_ptr<KillSwitch> kill_switch_;
  std::optional<reports::AbortRecord> abort_;       // set when the run stopped itself
  bool steady_checked_ = false;                     // the `before` probes were asked
  bool told_faults_finished_ = false;
  LaunchContext launch_ctx_;
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
  // Last, so they go first: their threads read or write the members above.
  LiveStatus live_{run_id_, scenario_.name, scenario_.faults};
  std::unique_ptr<prometheus::MetricsListener> listener_;  // --metrics-listen
  std::unique_ptr<grafana::AnnotationPoster> grafana_;     // --grafana
};

}  // namespace chaosbench::harness

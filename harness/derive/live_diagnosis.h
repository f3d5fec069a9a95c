// The diagnosis, live (reports/diagnosis/diagnoser.h; docs/diagnosis.md): once a second it feeds
// the samples that came since into the engine and judges the windows whose lag has
// passed; each culprit it names for the first time goes to `named` (the run records a
// harness event "diagnosis_named", which gives diagnosis/time_to_localise). Each second it
// also adds a sample diagnosis/culprits (rank -1: how many it has named so far, 0 before
// any) to the store, which a `metric` probe can watch to stop a run that found its
// culprit. Blind like the command: it reads the sample store only, never the fault
// timeline.
// Threads: start() and stop() from one thread; one thread of its own between them, which
// alone calls `named`.
#pragma once

#include <functional>

#include "harness/process/periodic_thread.h"
#include "harness/collect/sample_store.h"
#include "reports/diagnosis/diagnoser.h"

namespace chaosbench::harness {

class LiveDiagnosis {
 public:
  using Named = std::function<void(const reports::DiagnosisCulprit&, int culprits_so_far)>;
  // `t0_wall`: the workload's start (Unix seconds), the engine's time origin; `window_s`
  // the mesh's and the node telemetry's window.
  LiveDiagnosis(SampleStore& store, double t0_wall, double window_s, Named named);
  ~LiveDiagnosis();  // stop()
  LiveDiagnosis(const LiveDiagnosis&) = delete;
  LiveDiagnosis& operator=(const LiveDiagnosis&) = delete;

  void set_rank_node(int rank, const std::string& node);  // before start()
  void start();
  void stop();  // idempotent

 private:
  void tick();

  SampleStore& store_;
  double t0_wall_;
  Named named_;
  reports::Diagnoser engine_;
  std::size_t cursor_ = 0;  // the store's arrival index read up to
  int culprits_ = 0;
  PeriodicThread thread_;  // last: stopped before the members its ticks use go
};

}  // namespace chaosbench::harness

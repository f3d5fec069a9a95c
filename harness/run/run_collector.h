// What watches a run from beside it and attaches through this one interface, so that Run
// keeps a list of collectors and not a member per kind: the link mesh and node telemetry
// (telemetry_collector.h), the live diagnosis, the scenario's scrapes, the live probes
// and their stop condition, the kill switch, and the live outputs (--metrics-listen,
// --grafana).
//
// Contract (Run, run_lifecycle.cc, keeps it):
// - at(stage, ctx) once for each stage, in their order, every collector in the order of
//   the list: kFirst before anything is made (a failure there, HostError, is exit 3 with
//   nothing to undo); kBringUp once the run's environment is up (ctx.env set; a HostError
//   there is exit 3 too); kWorkload once the ranks are planned, before they start
//   (ctx.launches set); kRanksStarted once they were started. A collector acts on the
//   stages it needs;
// - on_fault(), before_first_fault(), faults_finished(), abort_decision() and
//   abort_carried_out() on the run's thread, between kBringUp and stop();
// - stop() in the unwind, in the reverse order of the list, after every fault was
//   reverted and before the nodes stop; those whose stops_last() is true (they report on
//   the unwind, or serve the final state) at its very end instead. stop() is idempotent;
//   once it returned no thread of the collector touches the store, the timeline or the
//   run. The destructor stops.
// A collector never fails a run once started: what goes wrong is a timeline line.
#pragma once

#include <optional>
#include <string>

#include "harness/derive/result_builder.h"
#include "harness/probes/probe_engine.h"
#include "harness/run/fault_driver.h"
#include "harness/run/run_context.h"

namespace chaosbench::harness {

class RunCollector {
 public:
  enum class Stage { kFirst, kBringUp, kWorkload, kRanksStarted };

  virtual ~RunCollector() = default;

  virtual void at(Stage stage, const RunContext& ctx) = 0;
  virtual bool stops_last() const { return false; }
  virtual void stop() = 0;

  // An occurrence of a fault applied (t.active) or reverted.
  virtual void on_fault(const FaultTransition& /*t*/) {}
  // The first fault is about to be applied. False, with why, when the system is not
  // steady (every fault is then skipped).
  virtual bool before_first_fault(std::string* /*why*/) { return true; }
  // Nothing is pending or in effect any more.
  virtual void faults_finished() {}
  // Whether the run is to stop itself now, and why.
  virtual std::optional<AbortDecision> abort_decision() { return std::nullopt; }
  // After an abort, once every fault was reverted.
  virtual void abort_carried_out() {}
  // True while the run's loop must look every 20 ms (a stop condition to notice).
  virtual bool wants_quick_ticks() const { return false; }
  // What results.json takes from it.
  virtual void add_to(ResultInputs& /*in*/) const {}
};

}  // namespace chaosbench::harness

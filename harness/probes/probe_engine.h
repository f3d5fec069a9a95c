// The scenario's live probes while a run goes (docs/probes.md): each probe is evaluated
// on its own thread every `interval` while its mode makes it active (before: until the
// first fault; continuous: always; during:FAULT: while that fault is in effect; after:
// once the fault timeline is over), its outcomes are kept as a record (evaluations,
// failures, the pass/fail transitions), and the stop condition is decided: a probe of
// `abort.when` that has failed for `abort.for` without a pass between.
//
// The engine never touches a fault or a process: the run's thread asks it whether the
// system is steady before the first fault (steady_state) and whether to abort
// (abort_decision), and does the rest itself.
// Threads: the probe threads evaluate and decide; every public method may be called from
// any thread. Hooks are called on the probe threads, outside the engine's lock.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "harness/probes/probe_check.h"
#include "harness/scenario/probe_spec.h"
#include "reports/model/run_model.h"

namespace chaosbench::harness {

// Why the run is to stop itself.
struct AbortDecision {
  std::string cause;     // the probe's name, or "kill switch"
  std::string evidence;  // "failed for 3.0s: <the probe's last evidence>", or who pulled the switch
  double decided_s = 0;  // seconds since the workload started
};

class ProbeEngine {
 public:
  using MakeCheck = std::function<std::unique_ptr<probes::ProbeCheck>(const ProbeSpec&)>;
  struct Hooks {
    std::function<double()> now_s;     // seconds since the workload started
    std::function<double()> now_wall;  // Unix seconds, what checks window by
    // Every outcome; `changed` for the first one and each pass <-> fail change.
    std::function<void(const ProbeSpec&, const reports::ProbeTransition&, bool changed)> on_result;
    // The stop condition became true (once).
    std::function<void(const AbortDecision&)> on_abort;
  };

  // Borrows `probes` and `abort` (the scenario's), which must outlive it. Makes every
  // check at once (make may throw: a probe that cannot be made is a set-up failure).
  ProbeEngine(const std::vector<ProbeSpec>& probes, const std::optional<AbortSpec>& abort, const MakeCheck& make,
              Hooks hooks);
  ~ProbeEngine();  // stop()
  ProbeEngine(const ProbeEngine&) = delete;
  ProbeEngine& operator=(const ProbeEngine&) = delete;

  // Starts one thread per probe (the workload has started). Once.
  void start();
  // Wakes and joins the threads; an evaluation under way finishes first (at most its
  // timeout). Idempotent.
  void stop();

  // What the run's thread tells the engine. Not blocking.
  void fault_active(const std::string& fault, bool active);
  void faults_started();  // the first fault is about to be applied: `before` probes end
  void faults_finished();  // nothing pending or in effect: `after` probes begin

  // Whether every `before` probe's latest outcome passed, waiting (at most each probe's
  // timeout plus a second) for a probe not evaluated yet. `why` names the first that did
  // not pass, with its evidence. True when there is no `before` probe.
  bool steady_state(std::string* why);
  bool has_before_probes() const;

  // The stop condition, once decided (it stays decided).
  std::optional<AbortDecision> abort_decision() const;
  bool abort_decided() const { return decided_.load(std::memory_order_acquire); }

  // One record per probe, in the scenario's order.
  std::vector<reports::ProbeRecord> records() const;

 private:
  struct Probe;
  void loop(Probe& p);
  bool active(const Probe& p) const;  // under mutex_
  // `t`: when the evaluation ended (run seconds); `due`: when it was due.
  void take(Probe& p, const probes::ProbeOutcome& outcome, double t, std::chrono::steady_clock::time_point due);

  const std::vector<ProbeSpec>& specs_;
  const std::optional<AbortSpec>& abort_;
  Hooks hooks_;
  std::vector<std::unique_ptr<Probe>> probes_;
  std::vector<std::thread> threads_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;  // state, a result, or stop
  bool stopping_ = false;
  bool faults_started_ = false;
  bool faults_finished_ = false;
  std::multiset<std::string> active_faults_;  // names, once per active occurrence
  std::optional<AbortDecision> decision_;
  std::atomic<bool> decided_{false};
};

}  // namespace chaosbench::harness

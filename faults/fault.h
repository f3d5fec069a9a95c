// The one interface every fault type implements. Public apply()/revert() are non-virtual:
// they enforce the contract and roll back a failed apply once; each type implements
// do_apply/do_revert.
// Contract (docs/architecture.md, "Where to add: a fault type"):
// - apply() acts on the resolved target; it records what revert() needs in the UndoLog
//   (the run's journal) before acting; if it fails halfway, apply() undoes it.
// - revert() is idempotent: reverting what is already gone is success. A failure throws
//   FaultError and is reported by the runner, never swallowed.
// - irreversible types (a kill) report reversible() == false; the runner never reverts
//   them and restarts instead where the scenario says so.
// Threads: a Fault is used from the runner's thread only. Both calls may block briefly.
#pragma once

#include <chrono>
#include <map>
#include <stdexcept>
#include <string>
#include <sys/types.h>
#include <vector>

#include "faults/param.h"
#include "faults/target.h"
#include "faults/undo_log.h"

namespace chaosbench::faults {

class FaultError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Fault {
 public:
  virtual ~Fault() = default;
  Fault(const Fault&) = delete;
  Fault& operator=(const Fault&) = delete;

  // Puts the fault in effect on `target`, recording in `log` what undoing it takes before
  // each change. Throws when it cannot (FaultError, or the journal's own error); then
  // nothing of it remains in effect: when do_apply() fails halfway, apply() runs
  // do_revert() once to take back what it did (so a type never rolls back itself) and
  // rethrows the error; if the rollback fails too, a FaultError names both (what could
  // not be undone stays in the journal for cleanup). `log` must outlive the fault.
  // Calling apply() twice without revert() is a logic error.
  void apply(const ResolvedTarget& target, UndoLog& log);

  // Takes the fault out of effect. Idempotent; a no-op before apply().
  void revert();

  bool applied() const { return applied_; }
  virtual bool reversible() const { return true; }
  // The mechanism used ("none", "netem", "nfqueue", "signal", ...), named in results.
  virtual std::string backend() const = 0;
  // Processes this fault ended or may end on purpose (a kill, a fatal signal): their exit
  // is the fault's effect, not a workload failure.
  virtual std::vector<pid_t> ended_processes() const { return {}; }
  // What the fault measured of its own effect, by name ("held_mean_us", "packets", ...);
  // "effect_error_pct" is fault/effect_error: the effect measured against the one asked.
  // Valid after revert() too (the last application's figures).
  virtual std::map<std::string, double> effect() const { return {}; }

 protected:
  Fault() = default;
  UndoLog& log() { return *log_; }

 private:
  // May throw halfway: do_revert() must then undo what it did so far (and only that), as
  // it undoes all of it after a success.
  virtual void do_apply(const ResolvedTarget& target) = 0;
  virtual void do_revert() = 0;
  // do_revert() after a failed do_apply(): "" when it worked, else why not.
  std::string roll_back() noexcept;

  UndoLog* log_ = nullptr;
  bool applied_ = false;
};

}  // namespace chaosbench::faults

// The run's live state, as `run --metrics-listen` exposes it (docs/prometheus.md): the
// stage of the run and from it the phase ("baseline", "fault:NAME", "recovery"...), each
// scenario fault's activity, probe results, an abort, and a few counters. Kept apart from
// the run's own units so that a reader on another thread never touches them.
// Threads: every method is safe from any thread. Writers (the run's thread, the probe
// engine's) hold the one mutex only to update a few fields; snapshot() copies under it.
// Nothing here blocks beyond that mutex.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/scenario/scenario.h"

namespace chaosbench::harness {

// Where the run is; the phase while kRunning comes from the faults (LiveSnapshot::phase).
enum class RunStage { kSetup, kRunning, kUnwinding, kFinished };

// One fault of the scenario (all its occurrences together: the series a dashboard wants
// stays the same from the first scrape to the last).
struct LiveFault {
  std::string name;
  std::string type;
  std::string target;            // the scenario's target as written (target_label)
  int active = 0;                // occurrences in effect now
  std::uint64_t applied = 0;     // occurrences applied so far
  std::vector<std::string> targets;  // what the newest occurrence resolved to ("node1"...)
};

struct LiveProbe {
  std::optional<bool> ok;        // none before the first result
  std::optional<double> value;   // the newest result's value, when it had one
  double t = 0;                  // when the newest result came (seconds since the workload started)
  std::uint64_t failures = 0;    // failed results so far
  std::uint64_t results = 0;
};

struct LiveSnapshot {
  std::string run_id;
  std::string scenario;
  RunStage stage = RunStage::kSetup;
  std::vector<LiveFault> faults;               // scenario order
  std::map<std::string, LiveProbe> probes;     // by name
  bool aborted = false;
  std::string abort_reason;
  std::uint64_t fault_errors = 0;              // applies or reverts that failed
  std::uint64_t annotation_failures = 0;       // Grafana posts that failed

  // "setup", "baseline" (no fault applied yet), "fault:a" or "fault:a,b" (in effect
  // now), "recovery" (after a fault), "aborted", "unwinding", "finished".
  std::string phase() const;
  // Every phase this run can be in (the current one included), for an enum-style series.
  std::vector<std::string> phases() const;
};

// "all", "nodes:1,2", "ranks:0", "random:2", "percent:50", "links:0-1,2-3", "groups:0,1|2,3".
std::string target_label(const TargetSpec& target);

class LiveStatus {
 public:
  LiveStatus(std::string run_id, std::string scenario, const std::vector<FaultSpec>& faults);

  void set_stage(RunStage stage);
  // Occurrence of the scenario's fault number `fault` (index in Scenario::faults) took
  // effect / ended. Out-of-range indices are ignored.
  void fault_applied(std::size_t fault, const std::vector<std::string>& targets);
  void fault_reverted(std::size_t fault);
  void fault_error();
  void annotation_failed();

  // A probe's result at `t` (seconds since the workload started): the probe engine's call.
  void probe_result(const std::string& name, bool ok, std::optional<double> value, double t);
  // Makes a probe known before its first result (its failure count shows 0).
  void declare_probe(const std::string& name);
  // The run is being stopped by a stop condition or the kill switch.
  void aborted(const std::string& reason);

  LiveSnapshot snapshot() const;

 private:
  mutable std::mutex mutex_;
  LiveSnapshot state_;
};

std::string_view to_string(RunStage stage);

}  // namespace chaosbench::harness

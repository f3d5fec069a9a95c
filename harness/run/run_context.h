// What a run shares with the collectors that watch it (run_collector.h): the scenario,
// the run's options and id, the sample store and the live state, and, once brought up,
// its environment (timeline, node site, node cgroups); its clock; and the ranks once the
// workload has started. Plain references into the Run, which outlives its collectors.
// Threads: the store, the timeline and the live state are thread-safe; now_s is the run
// thread's alone (a collector's own thread uses wall time less t0_wall).
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "bench/protocol/record.h"
#include "harness/collect/live_status.h"
#include "harness/collect/sample_store.h"
#include "harness/plan/workload_launcher.h"
#include "harness/run/runner.h"
#include "harness/scenario/scenario.h"

namespace chaosbench::harness {

class RunEnvironment;

struct RunContext {
  const Scenario& scenario;
  const RunOptions& options;
  const std::string& run_id;
  SampleStore& store;
  LiveStatus& live;
  // Unix seconds when the workload started (before that, when the run began).
  const std::atomic<double>& t0_wall;
  // When this run began (Unix seconds, before its journal).
  double began_wall = 0;
  // Seconds since the workload started; the run's thread only.
  std::function<double()> now_s{};
  // A record into the store (and a workload event into the timeline), from any thread.
  std::function<void(const bench::Record&, double received)> take_record{};
  // A harness event (rank -1) into the store and the timeline, from any thread.
  std::function<void(const std::string& name, bench::Labels fields)> harness_event{};
  // Set once the run is brought up (null for a collector of Stage::kFirst).
  RunEnvironment* env = nullptr;
  // Set once the workload's ranks are planned (Stage::kWorkload).
  const std::vector<RankLaunch>* launches = nullptr;
};

}  // namespace chaosbench::harness

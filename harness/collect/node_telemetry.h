// What each node's processes get of the machine, sampled once a window from the kernel's
// own accounting (docs/diagnosis.md): how many CPUs its threads used, how many of them
// waited for a CPU (per-thread run delay, /proc/<tid>/schedstat: a straggler starved by a
// CPU quota or a noisy neighbour waits; one slowed by its device sleeps), the time its CPU
// quota throttled it (cpu.stat, when the node has a cpu cgroup) and its memory use. The
// threads are the node's cgroup's (pids: v1 `tasks`, v2 `cgroup.threads`), so helpers a
// rank started count too. Samples, rank -1:
//   node/cpu_usage{node}      CPUs (thread CPU time / window)
//   node/cpu_wait{node}       threads (run delay / window: the mean number kept waiting)
//   node/cpu_throttled{node}  % of the window its quota held it (cpu cgroup only)
//   node/memory_used{node}    bytes (memory cgroup only)
//   host/cpu_steal            % of the host's CPU time stolen by its hypervisor
// Threads: start() and stop() from one thread; one thread of its own between them, which
// alone calls the sink.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "bench/protocol/record.h"
#include "common/values/units.h"
#include "harness/process/periodic_thread.h"

namespace chaosbench::harness {

struct NodeTelemetrySource {
  std::string name;          // "node2", the label value
  std::string threads_file;  // the node cgroup's list of thread ids
  std::string cpu_stat;      // its cpu.stat, or "" without a cpu cgroup
  std::string memory_usage;  // memory.usage_in_bytes (v1) or memory.current (v2), or ""
};

class NodeTelemetry {
 public:
  using Sink = std::function<void(const bench::Sample&)>;
  // `host`: the label host/cpu_steal carries ({"host": host}); "" for none (one host).
  NodeTelemetry(std::vector<NodeTelemetrySource> nodes, common::Duration window, Sink sink, std::string host = "");
  ~NodeTelemetry();  // stop()
  NodeTelemetry(const NodeTelemetry&) = delete;
  NodeTelemetry& operator=(const NodeTelemetry&) = delete;

  void start();  // takes the first counters now, then samples once a window
  void stop();   // idempotent

  // One thread's counters from /proc/<tid>/schedstat: on-CPU and run-delay nanoseconds.
  struct ThreadTimes {
    std::uint64_t cpu_ns = 0;
    std::uint64_t wait_ns = 0;
  };
  // Parses a schedstat line ("cpu_ns wait_ns timeslices"); false when it is not one.
  static bool parse_schedstat(const std::string& text, ThreadTimes* out);
  // Reads throttled time (ns) from cpu.stat text: v1 throttled_time (ns), v2
  // throttled_usec; false when neither is there.
  static bool parse_throttled(const std::string& text, std::uint64_t* ns);

 private:
  struct NodeState {
    std::map<int, ThreadTimes> threads;
    std::uint64_t throttled_ns = 0;
    bool have_throttled = false;
  };
  void sample(double now, double window_s, bool first);
  void sample_steal(double now, bool first);

  std::vector<NodeTelemetrySource> nodes_;
  std::vector<NodeState> state_;
  common::Duration window_;
  Sink sink_;
  std::string host_;
  std::uint64_t steal_ = 0, total_ = 0;  // /proc/stat jiffies at the last sample
  std::chrono::steady_clock::time_point last_;  // the last sample (the thread's, after start())
  PeriodicThread thread_;  // last: stopped before the members its ticks use go
};

}  // namespace chaosbench::harness

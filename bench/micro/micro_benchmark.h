// One entry of the micro-benchmark suite (`chaosbench bench micro`): a Google Benchmark
// body plus what its run means as a catalogue metric. The suite is a plain table of these
// (harness/selfbench/micro_suite.cc); the runner registers, runs and converts them. Entries of
// bench/micro/ measure the machine (GEMM, memory, loopback gloo, checkpoint disk); the
// tool's own costs live in harness/selfbench/ because they exercise the harness.
#pragma once

#include <functional>
#include <string>

#include <benchmark/benchmark.h>

#include "bench/protocol/record.h"

namespace chaosbench::bench::micro {

// How a run becomes the metric's value: `counter` names a rate counter (kIsRate, per
// second of the run's real or manual time) the body sets; an empty `counter` means the
// real time per iteration in the entry's time unit. The value is that number x `scale`.
struct Measure {
  std::string counter;
  double scale = 1;
};

// How the benchmark's time is taken.
enum class Timing {
  kRealTime,    // wall clock around the loop (threads, waiting on sockets and disks count)
  kManualTime,  // the body calls state.SetIterationTime (a part of each iteration only)
};

struct MicroBenchmark {
  // The Google Benchmark name, which --filter matches: "<metric>/<parameter>:<value>...".
  std::string name;
  std::string metric;  // catalogue name; unit and better-direction come from there
  Labels labels;       // added to {phase: overall, benchmark: name}
  Measure measure;
  Timing timing = Timing::kRealTime;
  benchmark::TimeUnit time_unit = benchmark::kMillisecond;
  // Called by Google Benchmark, possibly several times while it sizes the iteration count:
  // costly set-up belongs in a fixture the closure shares. Never throws: a failure is
  // state.SkipWithError (see guarded()).
  std::function<void(benchmark::State&)> body;
};

// Wraps `body` so that an exception becomes state.SkipWithError with its message, the
// run then being reported as failed instead of ending the process.
std::function<void(benchmark::State&)> guarded(std::function<void(benchmark::State&)> body);

}  // namespace chaosbench::bench::micro

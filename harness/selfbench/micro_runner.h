// Runs the micro-benchmark suite in this process through Google Benchmark and turns what
// it measured into the run model: scenario "micro", one MetricRecord per benchmark with
// labels {phase: overall, benchmark: NAME, ...the row's own}, unit and better-direction
// from the metric catalogue. Google Benchmark's console table goes to `console` as the
// rows finish; its context (CPU, caches) to stderr.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "bench/micro/micro_benchmark.h"
#include "reports/model/run_model.h"

namespace chaosbench::harness {

struct MicroRunOptions {
  std::string filter;     // a regex over the benchmark names (Google Benchmark's); empty: all
  double min_time = 0.2;  // seconds each benchmark runs at least (--benchmark_min_time)
};

struct MicroRunOutcome {
  reports::RunResult result;
  std::size_t matched = 0;  // benchmarks the filter selected; 0 is a usage error for the caller
};

// Blocking; not reentrant (Google Benchmark's registry is process-wide: this registers the
// suite, runs it and clears the registry again). A row that fails (an exception in its
// body) is a failed result with its reason, not an exception; the verdict is then "fail".
MicroRunOutcome run_micro_suite(const std::vector<bench::micro::MicroBenchmark>& suite, const MicroRunOptions& options,
                                std::ostream& console);

// The metric value of one finished Google Benchmark run of `row` (Measure's rule), or
// nothing when the counter it names is missing.
std::optional<double> measured_value(const bench::micro::MicroBenchmark& row,
                                     const benchmark::BenchmarkReporter::Run& run);

// The record of `row` with `value`; throws std::logic_error when row.metric is not in the
// catalogue (a suite bug).
reports::MetricRecord micro_record(const bench::micro::MicroBenchmark& row, double value);

}  // namespace chaosbench::harness

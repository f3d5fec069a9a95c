// The tool's own costs in the micro-benchmark suite, as catalogue metrics:
//   bench/scenario_parse  us per parse_scenario of a scenario file (scenarios/demo.json)
//   bench/ingest_rate     records/s into the harness: through a real MetricsServer socket
//                         into a SampleStore (MetricsClient encodes, the server decodes and
//                         stores), and decode_record alone over the same lines
//   bench/report_time     ms to serialize a synthetic run of 10^6 series samples, per
//                         report format (results.json today; see kReportFormats)
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "bench/micro/micro_benchmark.h"
#include "reports/model/run_model.h"

namespace chaosbench::harness {

// `scenario_file`: the scenario bench/scenario_parse parses (read once, on first use).
std::vector<bench::micro::MicroBenchmark> tool_benchmarks(const std::string& scenario_file);

// A run of 4 ranks whose train/step_time series hold `samples` samples in all, with
// phases, faults, metrics and events around them: what bench/report_time renders.
reports::RunResult synthetic_run(std::size_t samples);

}  // namespace chaosbench::harness

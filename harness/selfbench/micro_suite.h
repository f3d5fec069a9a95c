// The micro-benchmark suite of `chaosbench bench micro`: one explicit table, in the order
// the rows run and appear in results.json. A new row is an entry in one of the tables it
// concatenates (bench/micro/*_benchmarks.cc, harness/selfbench/tool_benchmarks.cc).
#pragma once

#include <string>
#include <vector>

#include "bench/micro/micro_benchmark.h"

namespace chaosbench::harness {

struct MicroSuiteOptions {
  std::string run_dir;        // checkpoint files are written (then removed) under it
  std::string scenario_file;  // what bench/scenario_parse parses
};

std::vector<bench::micro::MicroBenchmark> micro_suite(const MicroSuiteOptions& options);

}  // namespace chaosbench::harness

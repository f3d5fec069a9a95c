#include "harness/selfbench/micro_suite.h"

#include "bench/micro/checkpoint_benchmarks.h"
#include "bench/micro/comm_benchmarks.h"
#include "bench/micro/compute_benchmarks.h"
#include "harness/selfbench/tool_benchmarks.h"

namespace chaosbench::harness {

std::vector<bench::micro::MicroBenchmark> micro_suite(const MicroSuiteOptions& options) {
  std::vector<bench::micro::MicroBenchmark> suite;
  for (auto&& part : {bench::micro::compute_benchmarks(), bench::micro::comm_benchmarks(),
                      bench::micro::checkpoint_benchmarks(options.run_dir), tool_benchmarks(options.scenario_file)})
    suite.insert(suite.end(), part.begin(), part.end());
  return suite;
}

}  // namespace chaosbench::harness

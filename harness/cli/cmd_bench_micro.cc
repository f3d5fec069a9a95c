#include "common/files/trusted_directory.h"
#include "harness/cli/cmd_bench_micro.h"

#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "harness/cli/cli_options.h"
#include "harness/core/exit_code.h"
#include "harness/core/host_error.h"
#include "harness/selfbench/micro_runner.h"
#include "harness/selfbench/micro_suite.h"
#include "harness/run/run_directory.h"
#include "reports/render/report_set.h"

namespace chaosbench::harness {

int bench_micro(const Args& args) {
  po::options_description options("Options");
  options.add_options()
      ("filter", po::value<std::string>()->default_value(""), "regex over benchmark names (default: all)")
      ("out,o", po::value<std::string>(), "output directory (default runs/micro-<UTC timestamp>/)")
      ("min-time", po::value<double>()->default_value(0.2), "seconds each benchmark runs at least")
      ("scenario", po::value<std::string>()->default_value("scenarios/demo.json"), "scenario bench/scenario_parse parses");
  auto cl = parse_command_line(args, options, {});
  if (cl.help) {
    print_help("chaosbench bench micro [--filter REGEX] [--out DIR] [--min-time S] [--scenario FILE]",
               "Runs the micro-benchmark suite in-process (Google Benchmark): compute/gemm_tflops,\n"
               "compute/mem_bw, comm/latency (2-rank gloo ping-pong), ckpt/write_bw (into DIR),\n"
               "bench/scenario_parse, bench/ingest_rate, bench/report_time. Writes DIR/results.json and the other\n"
               "reports of a run (report.html, summary.md, junit.xml, trace.json).",
               options);
    return kExitPass;
  }
  MicroRunOptions run;
  run.filter = cl.vm["filter"].as<std::string>();
  run.min_time = cl.vm["min-time"].as<double>();
  if (!(run.min_time > 0) || run.min_time > 60) throw UsageError("--min-time must be in (0, 60] seconds");
  const std::string out = RunDirectory::resolve_out(cl.vm.count("out") ? cl.vm["out"].as<std::string>() : "", "micro");
  if (std::string why = common::make_trusted_directory(out, 0750); !why.empty())
    throw HostError(fmt::format("output directory: {}", why));

  auto suite = micro_suite({.run_dir = out, .scenario_file = cl.vm["scenario"].as<std::string>()});
  auto outcome = run_micro_suite(suite, run, std::cout);
  if (outcome.matched == 0) throw UsageError("--filter \"" + run.filter + "\" matches no benchmark");
  const std::string results = out + "/results.json";
  // The same reports as a run: results.json, report.html, summary.md, junit.xml, trace.json.
  reports::write_reports(outcome.result, out, reports::default_reports());
  if (outcome.result.verdict != reports::Verdict::kPass) std::cerr << "failed: " << outcome.result.reason << "\n";
  std::cout << results << "\n";
  return exit_code_for(outcome.result.verdict);
}

}  // namespace chaosbench::harness

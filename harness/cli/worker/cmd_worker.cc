// chaosbench worker ROLE [...] — the built-in workload processes that `run` starts, one
// per rank. Rank, world size and the metrics address come from the environment the
// runner sets (CHAOSBENCH_RANK, CHAOSBENCH_WORLD_SIZE, CHAOSBENCH_METRICS), so a worker
// can also be started by hand for debugging.
#include <sys/resource.h>

#include <algorithm>
#include <iostream>

#include "bench/blas/blas_probe.h"
#include "bench/collective/collective_benchmark.h"
#include "bench/collective/collective_config.h"
#include "bench/collective/collective_settings.h"
#include "harness/cli/cli_options.h"
#include "harness/cli/worker/worker_args.h"
#include "harness/cli/worker/cmd_worker_llm.h"
#include "harness/cli/worker/cmd_worker_llm_load.h"
#include "harness/cli/worker/cmd_worker_load.h"
#include "harness/cli/worker/cmd_worker_serve.h"
#include "harness/cli/worker/cmd_worker_train.h"
#include "harness/cli/worker/cmd_worker_train_export.h"
#include "harness/core/exit_code.h"

namespace chaosbench::harness {
namespace {

int worker_collective(const Args& args) {
  po::options_description options("Options");
  bench::add_collective_settings_flags(options);
  options.add_options()
      ("store", po::value<std::string>()->required(), "rendezvous store, file:/dir")
      ("prefix", po::value<std::string>()->default_value("chaosbench"), "store key prefix")
      ("host", po::value<std::string>()->default_value("127.0.0.1"), "address to bind");
  po::options_description visible("Options");
  visible.add(options);
  auto cl = parse_command_line(args, options, {});
  if (cl.help) {
    print_help("chaosbench worker collective --store file:/dir [options]",
               "One rank of the built-in collective benchmark (gloo over TCP). Reads CHAOSBENCH_RANK,\n"
               "CHAOSBENCH_WORLD_SIZE and CHAOSBENCH_METRICS from the environment.",
               visible);
    return kExitPass;
  }
  auto cfg = bench::collective_config(read_settings(cl.vm, bench::read_collective_settings));
  cfg.rank = env_int("CHAOSBENCH_RANK", 0);
  cfg.world_size = env_int("CHAOSBENCH_WORLD_SIZE", 1);
  cfg.store = cl.vm["store"].as<std::string>();
  cfg.store_prefix = cl.vm["prefix"].as<std::string>();
  cfg.host = cl.vm["host"].as<std::string>();
  if (auto why = bench::collective_config_error(cfg)) throw UsageError(*why);
  auto metrics = bench::MetricsClient::from_environment();
  return bench::run_collective_benchmark(cfg, metrics);
}

// One candidate BLAS kernel, measured in this process (the harness sets OPENBLAS_CORETYPE
// before starting it: harness/doctor/blas_choice.h). Prints one JSON line.
int worker_blas_probe(const Args& args) {
  po::options_description options("Options");
  options.add_options()
      ("size", po::value<int>()->default_value(1024), "the timed SGEMM is size x size x size")
      ("seconds", po::value<double>()->default_value(0.25), "time the product for at least this long")
      ("cpu-peak", "also measure the CPU's clock, vector width and FMA units");
  auto cl = parse_command_line(args, options, {});
  if (cl.help) {
    print_help("chaosbench worker blas-probe [--size N] [--seconds S] [--cpu-peak]",
               "Measures the BLAS kernel this process loaded (OPENBLAS_CORETYPE chooses it): its name,\n"
               "single-thread SGEMM GFLOP/s and whether its results are right; with --cpu-peak also\n"
               "the CPU's fp32 peak per core. Prints one JSON object.",
               options);
    return kExitPass;
  }
  // A kernel this CPU cannot run dies of SIGILL: the probe says so; no core file is worth it.
  const rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  const int size = cl.vm["size"].as<int>();
  const double seconds = cl.vm["seconds"].as<double>();
  if (size < 64 || size > 8192) throw UsageError("--size: expected 64 to 8192");
  if (!(seconds >= 0 && seconds <= 60)) throw UsageError("--seconds: expected 0 to 60");
  std::optional<bench::blas::CpuPeak> peak;
  if (cl.vm.count("cpu-peak")) peak = bench::blas::measure_cpu_peak();
  std::cout << bench::blas::probe_json(bench::blas::measure_blas(size, seconds), peak) << std::endl;
  return kExitPass;
}

}  // namespace

int cmd_worker(const Args& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::cout << "Usage: chaosbench worker ROLE [options]\n\nRoles:\n"
                 "  collective   one rank of the built-in collective benchmark\n"
                 "  train        one rank of the built-in data-parallel trainer\n"
                 "  train-export the trainer's initial weights and batches as float32 files (for a reference)\n"
                 "  serve        the built-in KServe v2 inference server\n"
                 "  load         load generator for KServe v2 HTTP servers\n"
                 "  llm-serve    the built-in OpenAI-compatible LLM server (CPU transformer or synthetic)\n"
                 "  llm-load     the token-level LLM load generator (TTFT, TPOT, ITL, goodput; find_peak)\n"
                 "  blas-probe   the BLAS kernel of this process: speed and correctness\n";
    return args.empty() ? kExitUsage : kExitPass;
  }
  Args rest(args.begin() + 1, args.end());
  if (args[0] == "collective") return worker_collective(rest);
  if (args[0] == "train") return worker_train(rest);
  if (args[0] == "train-export") return worker_train_export(rest);
  if (args[0] == "serve") return worker_serve(rest);
  if (args[0] == "load") return worker_load(rest);
  if (args[0] == "llm-serve") return worker_llm_serve(rest);
  if (args[0] == "llm-load") return worker_llm_load(rest);
  if (args[0] == "blas-probe") return worker_blas_probe(rest);
  throw UsageError("unknown worker role \"" + args[0] + "\" (known: collective, train, train-export, serve, load, llm-serve, llm-load, blas-probe)");
}

}  // namespace chaosbench::harness

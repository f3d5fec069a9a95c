// chaosbench worker ROLE [...] — the built-in workload processes that `run` starts, one
// per rank. Rank, world size and the metrics address come from the environment the
// runner sets (CHAOSBENCH_RANK, CHAOSBENCH_WORLD_SIZE, CHAOSBENCH_METRICS), so a worker
// can also be started by hand for debugging.
#include <sys/resource.h>

#include <algorithm>
#include <iostream>

#include "bench/blas/blas_probe.h"
#include "bench/collective/collective_benchmark.h"
#include "common/units.h"
#include "harness/cli/cli_options.h"
#include "harness/cli/worker_args.h"
#include "harness/cli/cmd_worker_load.h"
#include "harness/cli/cmd_worker_serve.h"
#include "harness/cli/cmd_worker_train.h"
#include "harness/cli/exit_code.h"

namespace chaosbench::harness {
namespace {

std::uint64_t size_option(const po::variables_map& vm, const char* name) {
  auto parsed = common::parse_size(vm[name].as<std::string>());
  if (!parsed) throw UsageError(std::string("--") + name + ": " + parsed.error);
  return parsed->bytes;
}

int worker_collective(const Args& args) {
  po::options_description options("Options");
  options.add_options()
      ("collectives", po::value<std::string>()->default_value("allreduce"), "comma-separated collectives")
      ("algorithms", po::value<std::string>()->default_value("ring"), "comma-separated allreduce algorithms")
      ("min-size", po::value<std::string>()->default_value("1KiB"), "smallest message")
      ("max-size", po::value<std::string>()->default_value("16MiB"), "largest message")
      ("factor", po::value<std::uint64_t>()->default_value(2), "size step factor")
      ("warmup", po::value<int>()->default_value(5), "warm-up iterations per size")
      ("iters", po::value<int>()->default_value(20), "timed iterations per size")
      ("duration-ms", po::value<long>()->default_value(0), "repeat the sweep until this long has passed (0: once)")
      ("check", po::value<bool>()->default_value(true), "check results (0 or 1)")
      ("store", po::value<std::string>()->required(), "rendezvous store, file:/dir")
      ("prefix", po::value<std::string>()->default_value("chaosbench"), "store key prefix")
      ("host", po::value<std::string>()->default_value("127.0.0.1"), "address to bind")
      ("timeout-ms", po::value<long>()->default_value(30000), "gloo operation timeout");
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
  bench::CollectiveConfig cfg;
  cfg.rank = env_int("CHAOSBENCH_RANK", 0);
  cfg.world_size = env_int("CHAOSBENCH_WORLD_SIZE", 1);
  cfg.collectives = split_list(cl.vm["collectives"].as<std::string>());
  cfg.algorithms = split_list(cl.vm["algorithms"].as<std::string>());
  cfg.min_bytes = size_option(cl.vm, "min-size");
  cfg.max_bytes = size_option(cl.vm, "max-size");
  cfg.factor = cl.vm["factor"].as<std::uint64_t>();
  cfg.warmup_iters = cl.vm["warmup"].as<int>();
  cfg.iters = cl.vm["iters"].as<int>();
  cfg.duration = std::chrono::milliseconds(std::max(0L, cl.vm["duration-ms"].as<long>()));
  cfg.check = cl.vm["check"].as<bool>();
  cfg.store = cl.vm["store"].as<std::string>();
  cfg.store_prefix = cl.vm["prefix"].as<std::string>();
  cfg.host = cl.vm["host"].as<std::string>();
  cfg.timeout = std::chrono::milliseconds(cl.vm["timeout-ms"].as<long>());
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
                 "  serve        the built-in KServe v2 inference server\n"
                 "  load         load generator for KServe v2 HTTP servers\n"
                 "  blas-probe   the BLAS kernel of this process: speed and correctness\n";
    return args.empty() ? kExitUsage : kExitPass;
  }
  Args rest(args.begin() + 1, args.end());
  if (args[0] == "collective") return worker_collective(rest);
  if (args[0] == "train") return worker_train(rest);
  if (args[0] == "serve") return worker_serve(rest);
  if (args[0] == "load") return worker_load(rest);
  if (args[0] == "blas-probe") return worker_blas_probe(rest);
  throw UsageError("unknown worker role \"" + args[0] + "\" (known: collective, train, serve, load, blas-probe)");
}

}  // namespace chaosbench::harness

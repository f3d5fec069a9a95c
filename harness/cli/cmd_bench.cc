// chaosbench bench — the harness's own self-benchmarks: the command line of each; what
// they measure lives in harness/selfbench/. `bench cluster` times bringing up and tearing
// down the virtual cluster, `bench delay-line` the NFQUEUE delay line, `bench shaper` the
// netlink shaper against tc, `bench micro` the Google Benchmark suite (cmd_bench_micro.h).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "harness/cli/cli_options.h"
#include "harness/cli/cmd_bench_micro.h"
#include "harness/core/exit_code.h"
#include "harness/selfbench/cluster_bench.h"
#include "harness/selfbench/delay_line_bench.h"
#include "harness/selfbench/shaper_bench.h"

namespace chaosbench::harness {
namespace {

std::vector<double> parse_delays(const std::string& text) {
  std::vector<double> delays;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    try {
      std::size_t used = 0;
      double ms = std::stod(item, &used);
      if (used != item.size() || !(ms > 0)) throw std::invalid_argument(item);
      delays.push_back(ms);
    } catch (const std::exception&) {
      throw UsageError("--delays takes milliseconds > 0 separated by commas, not \"" + item + "\"");
    }
  }
  if (delays.empty()) throw UsageError("--delays needs at least one delay");
  return delays;
}

int bench_cluster(const Args& args) {
  const ClusterBenchOptions defaults;
  po::options_description options("Options");
  options.add_options()
      ("nodes", po::value<int>()->default_value(defaults.nodes), "nodes (1..64)")
      ("repeat", po::value<int>()->default_value(defaults.repeat), "repetitions; the median is reported");
  auto cl = parse_command_line(args, options, {});
  if (cl.help) {
    print_help("chaosbench bench cluster [--nodes N] [--repeat R]",
               "Times bring-up plus tear-down of the virtual cluster (libnl), prints one JSON line.", options);
    return kExitPass;
  }
  ClusterBenchOptions o{cl.vm["nodes"].as<int>(), cl.vm["repeat"].as<int>()};
  if (o.nodes < 1 || o.nodes > 64 || o.repeat < 1) throw UsageError("--nodes 1..64, --repeat >= 1");
  run_cluster_bench(o, std::cout);
  return kExitPass;
}

int bench_delay_line(const Args& args) {
  const DelayLineBenchOptions defaults;
  po::options_description options("Options");
  options.add_options()
      ("delays", po::value<std::string>()->default_value(fmt::format("{}", fmt::join(defaults.delays_ms, ","))),
       "delays to measure with ping, ms")
      ("pings", po::value<int>()->default_value(defaults.pings), "pings per delay (and per baseline); medians are compared")
      ("throughput-delay", po::value<double>()->default_value(defaults.throughput_delay_ms), "delay for the iperf3 stream, ms")
      ("seconds", po::value<int>()->default_value(defaults.seconds), "iperf3 duration, s (0: no throughput test)");
  auto cl = parse_command_line(args, options, {});
  if (cl.help) {
    print_help("chaosbench bench delay-line [--delays MS,...] [--pings N] [--throughput-delay MS] [--seconds S]",
               "Measures the NFQUEUE delay line on a 2-node cluster: added RTT against the asked delay (ping), and "
               "one TCP stream's throughput through it (iperf3). Root. Goals: effect error <= 5%, >= 1 Gbit/s.",
               options);
    return kExitPass;
  }
  DelayLineBenchOptions o;
  o.delays_ms = parse_delays(cl.vm["delays"].as<std::string>());
  o.pings = cl.vm["pings"].as<int>();
  o.seconds = cl.vm["seconds"].as<int>();
  o.throughput_delay_ms = cl.vm["throughput-delay"].as<double>();
  if (o.pings < 3 || o.seconds < 0 || !(o.throughput_delay_ms > 0))
    throw UsageError("--pings >= 3, --seconds >= 0, --throughput-delay > 0");
  return run_delay_line_bench(o, std::cout) ? kExitPass : kExitCheckFailed;
}

int bench_shaper(const Args& args) {
  const ShaperBenchOptions defaults;
  po::options_description options("Options");
  options.add_options()
      ("repeat", po::value<int>()->default_value(defaults.repeat), "timed repetitions of each")
      ("warmup", po::value<int>()->default_value(defaults.warmup), "untimed repetitions first");
  auto cl = parse_command_line(args, options, {});
  if (cl.help) {
    print_help("chaosbench bench shaper [--repeat N] [--warmup W]",
               "Times a tc rate rule put in effect and taken out through netlink (TcShaper) against the same\n"
               "change made by tc commands, on a 2-node virtual cluster (root). One JSON line, then a table.",
               options);
    return kExitPass;
  }
  ShaperBenchOptions o{cl.vm["repeat"].as<int>(), cl.vm["warmup"].as<int>()};
  if (o.repeat < 1 || o.warmup < 0) throw UsageError("--repeat >= 1, --warmup >= 0");
  run_shaper_bench(o, std::cout);
  return kExitPass;
}

}  // namespace

int cmd_bench(const Args& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::cout << "Usage: chaosbench bench cluster|delay-line|shaper|micro [options]   (--help on each)\n\n"
                 "Micro-benchmarks of the harness itself (root):\n"
                 "  cluster     bring-up plus tear-down of N network namespaces joined by a bridge\n"
                 "  delay-line  the NFQUEUE delay line: ping effect error at 1/5/20/100 ms, iperf3 at 5 ms\n"
                 "  shaper      apply/revert latency of a netlink rate rule against the same change by tc\n"
                 "and of the machine and the tool (no root), results in DIR/results.json:\n"
                 "  micro       GEMM, STREAM triad, gloo ping-pong, checkpoint write, scenario parse,\n"
                 "              metric ingestion and report generation (Google Benchmark)\n";
    return args.empty() ? kExitUsage : kExitPass;
  }
  const Args rest(args.begin() + 1, args.end());
  if (args[0] == "cluster") return bench_cluster(rest);
  if (args[0] == "delay-line") return bench_delay_line(rest);
  if (args[0] == "shaper") return bench_shaper(rest);
  if (args[0] == "micro") return bench_micro(rest);
  throw UsageError("unknown benchmark \"" + args[0] + "\" (known: cluster, delay-line, shaper, micro)");
}

}  // namespace chaosbench::harness

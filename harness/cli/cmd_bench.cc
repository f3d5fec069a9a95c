// chaosbench bench — the harness's own micro-benchmarks. `bench cluster` times bringing
// up and tearing down the virtual cluster (bench/cluster_bringup.sh compares it with the
// same topology built by `ip` commands); `bench micro` is the Google Benchmark suite
// (cmd_bench_micro.h).
#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <iostream>
#include <vector>

#include "harness/cli/cli_options.h"
#include "harness/cli/cmd_bench_delay_line.h"
#include "harness/cli/cmd_bench_micro.h"
#include "harness/cli/cmd_bench_shaper.h"
#include "harness/cli/exit_code.h"
#include "harness/cluster/netns_cluster.h"
#include "harness/runner/run_directory.h"

namespace chaosbench::harness {

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
  if (args[0] == "delay-line") return bench_delay_line(Args(args.begin() + 1, args.end()));
  if (args[0] == "shaper") return bench_shaper(Args(args.begin() + 1, args.end()));
  if (args[0] == "micro") return bench_micro(Args(args.begin() + 1, args.end()));
  if (args[0] != "cluster")
    throw UsageError("unknown benchmark \"" + args[0] + "\" (known: cluster, delay-line, shaper, micro)");
  po::options_description options("Options");
  options.add_options()
      ("nodes", po::value<int>()->default_value(16), "nodes (1..64)")
      ("repeat", po::value<int>()->default_value(7), "repetitions; the median is reported");
  auto cl = parse_command_line(Args(args.begin() + 1, args.end()), options, {});
  if (cl.help) {
    print_help("chaosbench bench cluster [--nodes N] [--repeat R]",
               "Times bring-up plus tear-down of the virtual cluster (libnl), prints one JSON line.", options);
    return kExitPass;
  }
  const int nodes = cl.vm["nodes"].as<int>(), repeat = cl.vm["repeat"].as<int>();
  if (nodes < 1 || nodes > 64 || repeat < 1) throw UsageError("--nodes 1..64, --repeat >= 1");
  std::vector<double> ms;
  for (int i = 0; i < repeat; ++i) {
    auto start = std::chrono::steady_clock::now();
    {
      NetnsCluster cluster(nodes, make_run_id());  // throws HostError (exit 3) without root
    }
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  std::cout << fmt::format("{{\"benchmark\":\"cluster\",\"nodes\":{},\"repeat\":{},\"median_ms\":{:.3f},\"min_ms\":{:.3f},"
                           "\"max_ms\":{:.3f}}}\n",
                           nodes, repeat, ms[ms.size() / 2], ms.front(), ms.back());
  return kExitPass;
}

}  // namespace chaosbench::harness

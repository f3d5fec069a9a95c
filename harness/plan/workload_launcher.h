// Turns the scenario's workload into one process description per rank: the program, its
// arguments (placeholders expanded), its environment (CHAOSBENCH_*, the torchrun names,
// and in namespaces GLOO_SOCKET_IFNAME, NCCL_SOCKET_IFNAME and TP_SOCKET_IFNAME) and its
// log files. Pure: starts nothing, so the plan is unit-tested and printed
// by --dry-run.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "harness/process/process_supervisor.h"
#include "harness/scenario/scenario.h"

namespace chaosbench::harness {

struct LaunchContext {
  std::string self_exe;         // this chaosbench binary, for built-in workers
  std::string run_dir;          // --out, absolute
  std::string runtime_dir;      // sockets and the rendezvous store
  std::string metrics_address;  // "unix:/.../metrics.sock"
  std::string scenario_dir;     // directory of the scenario file, absolute
  std::string run_id;           // unique per run: separates rendezvous keys
  int master_port = 29500;
  std::uint64_t seed = 42;  // the scenario's (after --seed)
  std::vector<std::string> node_addrs;  // per node; "127.0.0.1" for local processes
  // Per node, the built-in workloads' rendezvous store ("tcp:ADDR:PORT" with agents);
  // empty, or "" for a node: "file:<runtime_dir>/store".
  std::vector<std::string> node_stores;
  // The nodes' network interface in namespaces ("eth0"), for the *_SOCKET_IFNAME variables
  // distributed libraries choose their address by; empty for local processes.
  std::string node_interface;
  // Extra environment for every process (the BLAS kernel the harness chose), below the
  // scenario's own `env`.
  std::map<std::string, std::string> env;
  std::vector<int> only_nodes;          // non-empty: ranks go on these nodes only (a restart without a dead node)
};

struct RankLaunch {
  int rank = 0;
  int node = 0;
  int local_rank = 0;
  ProcessSpec spec;
  // A service (an inference replica) runs until the other processes are done, then the
  // runner stops it; its being stopped is no failure.
  bool service = false;
};

// The CUDA interposer (libchaosbench_cuda.so) a command workload needs preloaded: when it
// has GPU or collective faults to act out. Empty when not needed; the path where this
// build puts it (<dir of chaosbench>/../lib/) otherwise, which may not exist (a build
// without CUDA): the runner refuses such a run (exit 3).
std::string gpu_interposer_for(const Scenario& scenario, const std::string& self_exe);

// The distinct --store arguments of these launches, in order (none for a command).
std::vector<std::string> store_arguments(const std::vector<RankLaunch>& launches);

// Throws std::runtime_error for what the parser cannot know (none today).
std::vector<RankLaunch> plan_workload(const Scenario& scenario, const LaunchContext& ctx);

}  // namespace chaosbench::harness

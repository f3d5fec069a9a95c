// Turns the scenario's workload into one process description per rank: where each rank
// goes and what it runs, as its kind's plan says (harness/workloads/workload_plan.h), and
// what every rank gets: its environment (CHAOSBENCH_*, the torchrun names, and in
// namespaces GLOO_SOCKET_IFNAME, NCCL_SOCKET_IFNAME and TP_SOCKET_IFNAME) and its log files.
// Pure: starts nothing, so the plan is unit-tested and printed by --dry-run.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "harness/process/process_supervisor.h"
#include "harness/scenario/scenario.h"
#include "harness/workloads/launch_context.h"

namespace chaosbench::harness {

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

// What each kind of workload decides about its own launch, behind one interface: the nodes
// its ranks go on, the command each rank runs and whether it is a service, and what it says
// of itself to the rest of the run (how many steps it makes or how long it runs, for the
// progress line; whether the harness should choose its BLAS kernel or preload the CUDA
// interposer; a fixed master port; the backends it ran on and the loss it trains to, for
// results.json). The launcher (harness/plan/workload_launcher.h) adds
// what every rank gets (environment, log files) and knows no kind.
//
// Adding a workload kind: its worker under bench/<kind>/, its scenario type and parser
// (harness/scenario/), and here one plan (a class in <kind>_plan.cc) and one row in
// workload_plan.cc's table.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/scenario/scenario.h"
#include "harness/workloads/launch_context.h"

namespace chaosbench::harness {

// Where one rank goes and what its placeholders ({rank}, {master_addr}, ...) expand to.
struct RankPlace {
  int rank = 0;
  int node = 0;
  int local_rank = 0;
  int world = 0;
  std::string address;  // its node's
  std::function<std::string(std::string_view)> placeholder;
};

// What one rank runs; the launcher adds the environment every rank gets below `env`.
struct RankCommand {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;
  std::string cwd;       // empty: the harness's
  bool service = false;  // runs until the other ranks are done, then the run stops it
};

class WorkloadPlan {
 public:
  virtual ~WorkloadPlan() = default;

  // The nodes its ranks go on, in rank order; every node by default.
  virtual std::vector<int> nodes(const ClusterSpec& cluster) const;
  virtual RankCommand command(const RankPlace& at, const LaunchContext& ctx) const = 0;

  // The steps it makes to its end (0: it does not count to one), and how long it runs by
  // the clock, when it says: what the progress line estimates the end from.
  virtual std::int64_t planned_steps() const { return 0; }
  virtual std::optional<double> planned_seconds() const { return std::nullopt; }
  // Whether its ranks do numeric work the harness chooses a BLAS kernel for; the value of
  // OPENBLAS_CORETYPE the scenario sets for it, if any.
  virtual bool uses_blas() const { return true; }
  virtual std::optional<std::string> scenario_blas_coretype() const { return std::nullopt; }
  // Whether GPU and collective faults reach it through the CUDA interposer (an outside
  // program) rather than its own device layer.
  virtual bool needs_gpu_interposer() const { return false; }
  // A master port the scenario fixes, and the node whose free port is taken otherwise.
  virtual std::optional<int> master_port() const { return std::nullopt; }
  virtual int master_port_node() const { return 0; }

  // What it says of what it ran on, for results.json's environment.backends (a key per
  // workload side, in words); `world`: the most ranks that worked together.
  virtual std::map<std::string, std::string> backends(std::int64_t /*world*/) const { return {}; }
  // The loss its time to target is measured to, when it trains to one.
  virtual std::optional<double> target_loss() const { return std::nullopt; }
};

// The plan of the scenario's workload (one row per kind). `scenario` must outlive it.
std::unique_ptr<WorkloadPlan> make_workload_plan(const Scenario& scenario);

}  // namespace chaosbench::harness

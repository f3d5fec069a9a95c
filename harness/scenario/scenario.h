// The scenario model: a scenario file as plain, validated, typed values. A Scenario never
// holds a live resource; the runner turns it into processes and applied faults.
// docs/scenario-format.md is the user-facing description of every field here.
#pragma once

#include <cstdint>
#include <map>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "bench/collective/collective_settings.h"
#include "bench/load/load_settings.h"
#include "bench/protocol/record.h"
#include "bench/llm/load/llm_load_settings.h"
#include "bench/llm/llm_serve_settings.h"
#include "bench/serve/serve_settings.h"
#include "bench/train/recovery_spec.h"
#include "bench/train/train_settings.h"
#include "faults/param.h"
#include "faults/registry/registry.h"
#include "faults/target.h"
#include "common/values/units.h"
#include "harness/scenario/host_spec.h"
#include "harness/scenario/mesh_spec.h"
#include "harness/scenario/probe_spec.h"
#include "harness/scenario/remote_spec.h"
#include "harness/scenario/scrape_spec.h"
#include "harness/scenario/sweep.h"

namespace chaosbench::harness {

using common::Duration;
using common::Percent;
using common::Rate;
using common::Size;

struct LinkSpec {
  std::optional<Rate> rate;
  std::optional<Duration> delay;
};

enum class ClusterMode {
  kAuto,        // network namespaces where the host can make them, else local processes
  kNamespaces,  // network namespaces or exit 3
  kLocal,       // local processes on loopback
  kSsh,         // one chaosbench agent per host of cluster.hosts, started over SSH
  kLocalAgents, // agents as local processes on loopback: the multi-host path on one machine
  kSlurm,       // one agent per node of a Slurm allocation, as one srun step
};

// Whether nodes run under agents (on hosts, or local agent processes).
constexpr bool runs_agents(ClusterMode m) {
  return m == ClusterMode::kSsh || m == ClusterMode::kLocalAgents || m == ClusterMode::kSlurm;
}

struct ClusterSpec {
  int nodes = 1;
  int ranks_per_node = 1;
  ClusterMode mode = ClusterMode::kAuto;
  LinkSpec link;
  std::vector<HostSpec> hosts;  // ssh: node N runs on hosts[N]
  RemoteSpec remote;            // every agent mode: cluster.ssh, cluster.agent, cluster.slurm
  int world_size() const { return nodes * ranks_per_node; }
};

// The collective workload is its settings, shared with `chaosbench worker collective`.
using CollectiveWorkload = bench::CollectiveSettings;

// The train workload is its settings (one definition of each default, shared with
// `chaosbench worker train`); its recovery block is the command workload's too.
using RecoveryMode = bench::train::RecoveryMode;
using RecoverySpec = bench::train::RecoverySpec;
using TrainWorkload = bench::train::TrainSettings;

// The serving workload: KServe v2 servers of the trainer's MLP on some nodes (replicas,
// services: they run until the load is done) and the open-loop load generator on another
// (the driver: the run ends when it does). Each is its workload's settings, shared with
// its `chaosbench worker`, plus where it runs, which only the harness knows.
struct LoadSpec : bench::load::LoadSettings {
  // A scenario's load runs 20s unless it says otherwise (docs/scenario-format.md); a
  // worker started alone keeps LoadSettings' 10s. The one default that differs on purpose
  // (tests/harness/workload_settings_test.cc checks both).
  LoadSpec() { duration = Duration{std::chrono::seconds(20)}; }
  int node = -1;  // -1: the last node
};

struct ServeWorkload : bench::serve::ServeSettings {
  std::vector<int> replicas;  // nodes; empty: every node but the load's
  LoadSpec load;
};

// LLM serving: the built-in OpenAI-compatible server on some nodes (replicas, services)
// or outside servers (`endpoints`), and the token-level load generator on another node
// (the driver). As for serve, each part is its worker's settings plus where it runs.
struct LlmLoadSpec : bench::llm::LlmLoadSettings {
  // 20s, as the serve workload's load (tests/harness/workload_settings_test.cc checks both).
  LlmLoadSpec() { duration = Duration{std::chrono::seconds(20)}; }
  int node = -1;  // -1: the last node
};

struct LlmWorkload : bench::llm::LlmServeSettings {
  std::vector<int> replicas;           // nodes; empty: every node but the load's
  std::vector<std::string> endpoints;  // outside servers ("http://host:port"): no replica is started
  LlmLoadSpec load;
};

struct CommandWorkload {
  std::vector<std::string> argv;
  std::vector<int> nodes;  // empty: every node
  std::map<std::string, std::string> env;
  std::string cwd;
  std::optional<int> master_port;
  RecoverySpec recovery;  // none or restart
};

using WorkloadSpec = std::variant<CollectiveWorkload, CommandWorkload, TrainWorkload, ServeWorkload, LlmWorkload>;
std::string_view workload_kind(const WorkloadSpec& w);  // "collective", "command", "train", "serve", "llm"
// The workload's recovery settings; a collective has none (mode none).
RecoverySpec workload_recovery(const WorkloadSpec& w);

struct TargetSpec {
  faults::TargetForm form = faults::TargetForm::kAll;
  std::vector<int> indices;  // nodes or ranks
  int count = 0;             // random
  Percent percent;           // percent
  std::vector<std::pair<int, int>> links;
  std::vector<std::vector<int>> groups;
};

struct RepeatSpec {
  Duration every;
  int count = 1;
};

// Random arrivals (a soak): occurrences at `at` + the running sum of independent
// inter-arrival times, each exponential with mean `mtbf` (a Poisson process) or Weibull
// with `scale` and `shape` (a renewal process), at most `max_occurrences` and within the
// scenario's timeout. Drawn from the scenario seed before the run (schedule_plan.h).
struct ArrivalSpec {
  enum class Process { kPoisson, kWeibull };
  Process process = Process::kPoisson;
  Duration mtbf;       // poisson: the mean; weibull: the scale
  double shape = 1.0;  // weibull only
  int max_occurrences = 1000;
};

struct FaultSpec {
  std::string name;
  std::string type;
  TargetSpec target;
  std::optional<Duration> at;
  std::optional<std::int64_t> at_step;
  std::optional<Duration> duration;
  std::optional<RepeatSpec> repeat;
  std::optional<ArrivalSpec> arrivals;
  // Each occurrence fires with this probability (seeded); 1 when absent.
  std::optional<double> probability;
  // A chain: one occurrence `delay` after each applied occurrence of the fault named.
  std::optional<std::string> after;
  std::optional<Duration> delay;
  // Never in effect together with another fault: an occurrence due while another fault
  // is in effect waits for it to end, and no other fault starts while this one is.
  bool exclusive = false;
  // When the ranks the fault ended start again; only for types whose registry row takes
  // it (FaultTypeInfo::restart_after). The run driver acts on it, never the fault.
  std::optional<Duration> restart_after;
  faults::Params params;
};

struct CheckSpec {
  std::string metric;
  bench::Labels labels;
  std::string phase = "overall";
  std::string stat = "value";
  std::optional<double> min;
  std::optional<double> max;
  std::optional<double> tolerance_pct;  // the baseline gate's allowance for this metric
};

struct Scenario {
  int schema_version = 1;
  std::string name;
  std::string description;
  std::uint64_t seed = 42;
  Duration timeout{std::chrono::minutes(10)};
  ClusterSpec cluster;
  WorkloadSpec workload;
  std::vector<FaultSpec> faults;
  std::vector<CheckSpec> checks;
  std::vector<SweepAxis> sweep;  // empty: one run
  std::vector<ProbeSpec> probes;
  std::optional<AbortSpec> abort;
  std::vector<ScrapeSpec> scrape;
  MeshSpec mesh;

  std::string source_path;    // the file as named on the command line
  std::string resolved_json;  // the document after --set overrides, for results.json
};

// Whether the scenario has a fault whose type has `trait` (faults/registry/registry.h).
bool has_fault_with(const Scenario& scenario, faults::FaultTrait trait);

}  // namespace chaosbench::harness

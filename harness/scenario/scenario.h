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

#include "bench/protocol/record.h"
#include "faults/param.h"
#include "faults/registry.h"
#include "faults/target.h"
#include "common/units.h"
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
};

struct ClusterSpec {
  int nodes = 1;
  int ranks_per_node = 1;
  ClusterMode mode = ClusterMode::kAuto;
  LinkSpec link;
  int world_size() const { return nodes * ranks_per_node; }
};

struct CollectiveWorkload {
  std::string backend = "gloo";
  std::vector<std::string> collectives{"allreduce"};
  std::vector<std::string> algorithms{"ring"};
  Size min_size{1024};
  Size max_size{16u << 20};
  std::uint64_t factor = 2;
  int warmup_iters = 5;
  int iters = 20;
  Duration duration{};  // zero: the sweep once; else repeated until this long has passed
  bool check = true;
  Duration timeout{std::chrono::seconds(30)};
};

// What the harness does when a rank fails (dies, or hangs past hang_timeout).
enum class RecoveryMode {
  kNone,     // the run fails
  kRestart,  // as torchrun: every rank is stopped and started again (attempt + 1)
  kElastic,  // the workload carries on without the rank; the harness restarts a killed
             // rank when its node is back and the workload admits it
};

struct RecoverySpec {
  RecoveryMode mode = RecoveryMode::kNone;
  int max_restarts = 3;
  std::optional<int> min_nodes;  // restart on fewer nodes, down to this many; unset: all
  Duration hang_timeout{std::chrono::seconds(60)};  // no step from any rank for this long: hung
};

struct TrainCheckpointSpec {
  int every_steps = 0;  // 0: no checkpoints
  bool incremental = true;
  int full_every = 4;
  bool async = true;
  std::string dir;  // empty: <out>/checkpoints
};

struct TrainWorkload {
  std::string backend = "gloo";  // "gloo" or "nccl" (device cuda)
  std::string device = "cpu";    // "cpu" or "cuda"
  std::vector<int> layers{256, 1024, 1024, 1024, 16};
  int batch_size = 1024;
  std::int64_t steps = 400;
  std::string optimizer = "sgd";
  double lr = 0.05, momentum = 0.9, weight_decay = 0, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  Size bucket_size{1u << 20};
  std::string algorithm = "tcp_ring";  // gradient allreduce: "tcp_ring" (its own), "bcube" or "ring" (gloo)
  int threads = 1;
  std::optional<double> target_loss;
  TrainCheckpointSpec checkpoint;
  RecoverySpec recovery;
  Duration timeout{std::chrono::seconds(10)};
  // Replicas compare fingerprints every N steps; 0: never. Unset: every step when the
  // scenario injects bit flips, else never (the check costs a hash of the state per step).
  std::optional<int> sdc_check_every;
};

// The serving workload: KServe v2 servers of the trainer's MLP on some nodes (replicas,
// services: they run until the load is done) and the open-loop load generator on another
// (the driver: the run ends when it does).
struct ServeBatching {
  int max_batch_size = 64;
  Duration max_queue_delay{std::chrono::microseconds(2000)};
  std::vector<int> preferred_batch_sizes;
};

struct LoadSpec {
  int node = -1;  // -1: the last node
  std::string scenario = "server";  // "server", "offline", "single-stream"
  double qps = 100;
  Duration duration{std::chrono::seconds(20)};
  int rows = 1;
  int connections = 32;
  Duration timeout{std::chrono::seconds(1)};
};

struct ServeWorkload {
  std::string model_name = "mlp";
  std::vector<int> layers{256, 1024, 1024, 1024, 16};
  std::string dtype = "fp32";  // "fp32" or "int8"
  std::vector<int> replicas;   // nodes; empty: every node but the load's
  int port = 8000;
  ServeBatching batching;
  int queue_limit = 1024;
  std::string checkpoint_dir;  // the trainer's checkpoints; empty: seeded weights
  LoadSpec load;
};

struct CommandWorkload {
  std::vector<std::string> argv;
  std::vector<int> nodes;  // empty: every node
  std::map<std::string, std::string> env;
  std::string cwd;
  std::optional<int> master_port;
  RecoverySpec recovery;  // none or restart
};

using WorkloadSpec = std::variant<CollectiveWorkload, CommandWorkload, TrainWorkload, ServeWorkload>;
std::string_view workload_kind(const WorkloadSpec& w);  // "collective", "command", "train", "serve"
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

struct FaultSpec {
  std::string name;
  std::string type;
  TargetSpec target;
  std::optional<Duration> at;
  std::optional<std::int64_t> at_step;
  std::optional<Duration> duration;
  std::optional<RepeatSpec> repeat;
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

  std::string source_path;    // the file as named on the command line
  std::string resolved_json;  // the document after --set overrides, for results.json
};

// Whether the scenario has a fault whose type has `trait` (faults/registry.h).
bool has_fault_with(const Scenario& scenario, faults::FaultTrait trait);

}  // namespace chaosbench::harness

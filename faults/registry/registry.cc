#include "faults/registry/registry.h"

#include <algorithm>
#include <vector>
#include <fmt/format.h>

#include "faults/gpu/gpu_fault.h"
#include "faults/marker/marker_fault.h"
#include "faults/network/network_fault_types.h"
#include "faults/node/cgroup_setting_fault.h"
#include "faults/node/node_pause.h"
#include "faults/node/signal_fault.h"

namespace chaosbench::faults {
namespace {

constexpr std::uint32_t kNodeForms = TargetForm::kAll | TargetForm::kNodes | TargetForm::kRandom | TargetForm::kPercent;
constexpr std::uint32_t kRankForms = kNodeForms | TargetForm::kRanks;
constexpr std::uint32_t kTrafficForms = kNodeForms | TargetForm::kLinks;
constexpr std::uint32_t kPartitionForms =
    TargetForm::kNodes | TargetForm::kRandom | TargetForm::kPercent | TargetForm::kLinks | TargetForm::kGroups;

// Where GPU faults are acted out: the built-in trainer and server (their device layer),
// and a command through the CUDA interposer.
constexpr std::string_view kGpuWorkloads = "train, serve, llm, command";

// A network fault's row: what every network type shares added to `row` (it needs the
// namespaces' network plane, and the host's backend is chosen for its own type).
FaultTypeInfo network_row(FaultTypeInfo row) {
  row.needs_namespaces = true;
  row.host_backend = [type = row.type](const Params& p, std::string* why) { return network_backend(type, p, why); };
  return row;
}

template <class T>
std::unique_ptr<Fault> make_plain(const Params&) {
  return std::make_unique<T>();
}

std::string check_signal(const Params& p) {
  const auto& name = p.get<std::string>("signal");
  return parse_signal(name) < 0 ? fmt::format("signal: unknown signal \"{}\" (a name such as \"SIGTERM\" or \"USR1\", or a "
                                              "number)", name)
                                : std::string();
}

// The rows in four groups, each in the order `chaosbench faults` prints them; a field a row
// leaves out has its default (registry.h).

// The marker, node and process faults.
std::vector<FaultTypeInfo> node_rows() {
  return {
      {.type = "marker",
       .summary = "changes nothing; marks a window so its metrics get a phase of their own",
       .params = MarkerFault::params(),
       .target_forms = kRankForms | TargetForm::kLinks | TargetForm::kGroups,
       .reversible = true,
       .backends = &MarkerFault::backends(),
       .make = make_plain<MarkerFault>},
      {.type = "node.pause",
       .summary = "freezes every process of the node for the duration, then thaws it (the hung node)",
       .params = NodePauseFault::params(),
       .target_forms = kNodeForms,
       .reversible = true,
       .backends = &NodePauseFault::backends(),
       .make = make_plain<NodePauseFault>},
      {.type = "node.cpu_throttle",
       .summary = "limits the node to a fraction of CPU for the duration (the straggler)",
       .params = cpu_throttle_params(),
       .target_forms = kNodeForms,
       .reversible = true,
       .needs_cgroup = "cpu",
       .backends = &cpu_throttle_backends(),
       .make = make_cpu_throttle},
      {.type = "node.memory_limit",
       .summary = "lowers the node's memory limit for the duration; an OOM kill ends a rank",
       .params = memory_limit_params(),
       .target_forms = kNodeForms,
       .reversible = true,
       .needs_cgroup = "memory",
       .backends = &memory_limit_backends(),
       .make = make_memory_limit,
       .traits = kOomKills},
      {.type = "node.kill",
       .summary = "SIGKILLs every process of the node; restart_after brings its ranks back",
       .params = kill_params(),
       .target_forms = kNodeForms,
       .reversible = false,
       .backends = &signal_backends(),
       .make = make_node_kill,
       .traits = kNodeGone,
       .restart_after = kKillRestartAfter},
      {.type = "rank.kill",
       .summary = "SIGKILLs one rank's processes; restart_after brings it back",
       .params = kill_params(),
       .target_forms = kRankForms,
       .reversible = false,
       .backends = &signal_backends(),
       .make = make_rank_kill,
       .restart_after = kKillRestartAfter},
      {.type = "process.signal",
       .summary = "sends any signal to the chosen ranks",
       .params = signal_params(),
       .target_forms = kRankForms,
       .reversible = false,
       .backends = &signal_backends(),
       .make = make_process_signal,
       .check = check_signal},
  };
}

// Network faults: on the network plane, so namespaced clusters (or hosts of a job) only.
std::vector<FaultTypeInfo> network_rows() {
  return {
      network_row({.type = "network.delay",
                   .summary = "delays the target's packets (delay, jitter, correlation) on the receiving side",
                   .params = network_delay_params(),
                   .target_forms = kTrafficForms,
                   .reversible = true,
                   .backends = &impairment_backends(),
                   .make = make_network_delay,
                   .check = check_impairment}),
      network_row({.type = "network.loss",
                   .summary = "drops a share of the target's packets",
                   .params = network_loss_params(),
                   .target_forms = kTrafficForms,
                   .reversible = true,
                   .backends = &impairment_backends(),
                   .make = make_network_loss,
                   .check = check_impairment}),
      network_row({.type = "network.rate",
                   .summary = "limits the target's traffic to a rate (htb through netlink)",
                   .params = network_rate_params(),
                   .target_forms = kTrafficForms,
                   .reversible = true,
                   .backends = &rate_backends(),
                   .make = make_network_rate,
                   .check = check_rate}),
      network_row({.type = "network.partition",
                   .summary = "cuts nodes, groups or links off from each other (symmetric or one way)",
                   .params = network_partition_params(),
                   .target_forms = kPartitionForms,
                   .reversible = true,
                   .backends = &partition_backends(),
                   .make = make_network_partition,
                   .check = check_partition}),
      network_row({.type = "network.corrupt",
                   .summary = "flips a bit in a share of the target's packets",
                   .params = network_corrupt_params(),
                   .target_forms = kTrafficForms,
                   .reversible = true,
                   .backends = &impairment_backends(),
                   .make = make_network_corrupt,
                   .check = check_impairment}),
      network_row({.type = "network.duplicate",
                   .summary = "sends a share of the target's packets twice (netem only)",
                   .params = network_duplicate_params(),
                   .target_forms = kTrafficForms,
                   .reversible = true,
                   .backends = &duplicate_backends(),
                   .make = make_network_duplicate,
                   .check = check_impairment}),
      network_row({.type = "network.reorder",
                   .summary = "sends a share of the target's packets ahead of the others, which are delayed",
                   .params = network_reorder_params(),
                   .target_forms = kTrafficForms,
                   .reversible = true,
                   .backends = &impairment_backends(),
                   .make = make_network_reorder,
                   .check = check_impairment}),
  };
}

// GPU faults: armed in the ranks' control blocks (faults/gpu), acted out by their device layer.
std::vector<FaultTypeInfo> gpu_rows() {
  return {
      {.type = "gpu.xid",
       .summary = "a sticky device error (an Xid): the rank's CUDA context is lost until the GPU is reset",
       .params = gpu_xid_params(),
       .target_forms = kRankForms,
       .reversible = true,
       .backends = &gpu_backends(),
       .make = make_gpu_xid,
       .check = check_gpu_xid,
       .surfaces = "every device call fails with the error's code: 214 cudaErrorECCUncorrectable (Xid 48), 700 "
                   "cudaErrorIllegalAddress (Xid 31), 719 cudaErrorLaunchFailure (Xid 13), 46 "
                   "cudaErrorDevicesUnavailable (Xid 79) or 220 cudaErrorNvlinkUncorrectable (Xid 74)",
       .workloads = kGpuWorkloads,
       .restart_after = kGpuRestartAfter},
      {.type = "gpu.oom",
       .summary = "device memory runs out: allocations fail",
       .params = gpu_oom_params(),
       .target_forms = kRankForms,
       .reversible = true,
       .backends = &gpu_backends(),
       .make = make_gpu_oom,
       .surfaces = "allocations fail with 2 cudaErrorMemoryAllocation (CUDA_ERROR_OUT_OF_MEMORY)",
       .workloads = kGpuWorkloads,
       .traits = kServeReplicaLives,
       .restart_after = kGpuRestartAfter},
      {.type = "gpu.slowdown",
       .summary = "device work takes factor times as long (thermal or power throttling)",
       .params = gpu_slowdown_params(),
       .target_forms = kRankForms,
       .reversible = true,
       .backends = &gpu_backends(),
       .make = make_gpu_slowdown,
       .surfaces = "no error: kernels (and the waits for them) take factor times as long",
       .workloads = kGpuWorkloads},
      {.type = "gpu.hang",
       .summary = "a kernel never completes: device calls block while in effect",
       .params = gpu_hang_params(),
       .target_forms = kRankForms,
       .reversible = true,
       .backends = &gpu_backends(),
       .make = make_gpu_hang,
       .surfaces = "no error: the call never returns (a watchdog or the collective timeout must notice)",
       .workloads = kGpuWorkloads,
       .traits = kHangs | kServeReplicaLives,
       .restart_after = kGpuRestartAfter},
      {.type = "gpu.bitflip",
       .summary = "silent data corruption: bits flipped in a tensor (gradients or parameters)",
       .params = gpu_bitflip_params(),
       .target_forms = kRankForms,
       .reversible = true,
       .backends = &gpu_backends(),
       .make = make_gpu_bitflip,
       .check = check_gpu_bitflip,
       .surfaces = "no error: wrong values (caught only by a check such as the trainer's replica fingerprint)",
       .workloads = "train",
       .traits = kSilentCorruption},
  };
}

// Collective faults: armed the same way, acted out by the ranks' collectives.
std::vector<FaultTypeInfo> collective_rows() {
  return {
      {.type = "collective.error",
       .summary = "an allreduce fails on the target ranks",
       .params = collective_error_params(),
       .target_forms = kRankForms,
       .reversible = true,
       .backends = &gpu_backends(),
       .make = make_collective_error,
       .surfaces = "the collective returns the ncclResult_t code (2 ncclSystemError by default)",
       .workloads = "train, command"},
      {.type = "collective.hang",
       .summary = "an allreduce never returns on the target ranks",
       .params = collective_hang_params(),
       .target_forms = kRankForms,
       .reversible = true,
       .backends = &gpu_backends(),
       .make = make_collective_hang,
       .surfaces = "no error: the collective blocks while in effect; peers time out",
       .workloads = "train, command",
       .traits = kHangs,
       .restart_after = kGpuRestartAfter},
  };
}

// Every row once, in the order `chaosbench faults` prints them.
const std::vector<FaultTypeInfo>& table() {
  static const std::vector<FaultTypeInfo> kTable = [] {
    std::vector<FaultTypeInfo> out;
    for (const auto& group : {node_rows(), network_rows(), gpu_rows(), collective_rows()})
      out.insert(out.end(), group.begin(), group.end());
    return out;
  }();
  return kTable;
}

}  // namespace

std::span<const FaultTypeInfo> fault_registry() { return table(); }

const FaultTypeInfo* find_fault_type(std::string_view type) {
  for (const auto& info : table()) {
    if (info.type == type) return &info;
  }
  return nullptr;
}

std::vector<const BackendChoice*> backend_choices() {
  std::vector<const BackendChoice*> out{&MarkerFault::backends(),     &impairment_backends(), &duplicate_backends(),
                                        &rate_backends(),             &partition_backends(),  &signal_backends(),
                                        &NodePauseFault::backends(), &cpu_throttle_backends(), &memory_limit_backends(),
                                        &gpu_backends()};
  for (const auto& info : table())
    if (std::find(out.begin(), out.end(), info.backends) == out.end()) out.push_back(info.backends);
  return out;
}

std::vector<ParamSpec> declared_params(const FaultTypeInfo& info) {
  std::vector<ParamSpec> out(info.params.begin(), info.params.end());
  if (!info.restart_after.empty())
    out.push_back(ParamSpec{"restart_after", ParamKind::kDuration, false, "", info.restart_after});
  return out;
}

bool fault_has_trait(std::string_view type, FaultTrait trait) {
  const FaultTypeInfo* info = find_fault_type(type);
  return info != nullptr && (info->traits & trait) != 0;
}

}  // namespace chaosbench::faults

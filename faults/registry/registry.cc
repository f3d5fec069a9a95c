#include "faults/registry/registry.h"

#include <algorithm>
#include <array>
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

constexpr std::string_view kDelay = "network.delay", kLoss = "network.loss", kRate = "network.rate",
                           kPartition = "network.partition", kCorrupt = "network.corrupt",
                           kDuplicate = "network.duplicate", kReorder = "network.reorder";

// The host backend chooser of a network fault type.
std::function<std::string(const Params&, std::string*)> backend_of(std::string_view type) {
  return [type](const Params& p, std::string* why) { return network_backend(type, p, why); };
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

// One line per fault type, in the order `chaosbench faults` prints them.
const std::array<FaultTypeInfo, 21>& table() {
  static const std::array<FaultTypeInfo, 21> kTable{{
      {"marker", "changes nothing; marks a window so its metrics get a phase of their own", MarkerFault::params(),
       kRankForms | TargetForm::kLinks | TargetForm::kGroups, true, false, "", &MarkerFault::backends(),
       make_plain<MarkerFault>},
      {"node.pause", "freezes every process of the node for the duration, then thaws it (the hung node)",
       NodePauseFault::params(), kNodeForms, true, false, "", &NodePauseFault::backends(), make_plain<NodePauseFault>},
      {"node.cpu_throttle", "limits the node to a fraction of CPU for the duration (the straggler)",
       cpu_throttle_params(), kNodeForms, true, false, "cpu", &cpu_throttle_backends(), make_cpu_throttle},
      {"node.memory_limit", "lowers the node's memory limit for the duration; an OOM kill ends a rank",
       memory_limit_params(), kNodeForms, true, false, "memory", &memory_limit_backends(), make_memory_limit, nullptr,
       nullptr, "", "", kOomKills},
      {"node.kill", "SIGKILLs every process of the node; restart_after brings its ranks back", kill_params(),
       kNodeForms, false, false, "", &signal_backends(), make_node_kill, nullptr, nullptr, "", "", kNodeGone,
       kKillRestartAfter},
      {"rank.kill", "SIGKILLs one rank's processes; restart_after brings it back", kill_params(), kRankForms, false,
       false, "", &signal_backends(), make_rank_kill, nullptr, nullptr, "", "", 0, kKillRestartAfter},
      {"process.signal", "sends any signal to the chosen ranks", signal_params(), kRankForms, false, false, "",
       &signal_backends(), make_process_signal, check_signal},
      {kDelay, "delays the target's packets (delay, jitter, correlation) on the receiving side",
       network_delay_params(), kTrafficForms, true, true, "", &impairment_backends(), make_network_delay,
       check_impairment, backend_of(kDelay)},
      {kLoss, "drops a share of the target's packets", network_loss_params(), kTrafficForms, true, true, "",
       &impairment_backends(), make_network_loss, check_impairment, backend_of(kLoss)},
      {kRate, "limits the target's traffic to a rate (htb through netlink)", network_rate_params(), kTrafficForms, true,
       true, "", &rate_backends(), make_network_rate, check_rate, backend_of(kRate)},
      {kPartition, "cuts nodes, groups or links off from each other (symmetric or one way)",
       network_partition_params(), kPartitionForms, true, true, "", &partition_backends(), make_network_partition,
       check_partition, backend_of(kPartition)},
      {kCorrupt, "flips a bit in a share of the target's packets", network_corrupt_params(), kTrafficForms, true, true,
       "", &impairment_backends(), make_network_corrupt, check_impairment, backend_of(kCorrupt)},
      {kDuplicate, "sends a share of the target's packets twice (netem only)", network_duplicate_params(),
       kTrafficForms, true, true, "", &duplicate_backends(), make_network_duplicate, check_impairment,
       backend_of(kDuplicate)},
      {kReorder, "sends a share of the target's packets ahead of the others, which are delayed",
       network_reorder_params(), kTrafficForms, true, true, "", &impairment_backends(), make_network_reorder,
       check_impairment, backend_of(kReorder)},
      // GPU and collective faults: armed in the ranks' control blocks (faults/gpu).
      {"gpu.xid", "a sticky device error (an Xid): the rank's CUDA context is lost until the GPU is reset",
       gpu_xid_params(), kRankForms, true, false, "", &gpu_backends(), make_gpu_xid, check_gpu_xid, nullptr,
       "every device call fails with the error's code: 214 cudaErrorECCUncorrectable (Xid 48), 700 "
       "cudaErrorIllegalAddress (Xid 31), 719 cudaErrorLaunchFailure (Xid 13), 46 cudaErrorDevicesUnavailable "
       "(Xid 79) or 220 cudaErrorNvlinkUncorrectable (Xid 74)",
       kGpuWorkloads, 0, kGpuRestartAfter},
      {"gpu.oom", "device memory runs out: allocations fail", gpu_oom_params(), kRankForms, true, false, "",
       &gpu_backends(), make_gpu_oom, nullptr, nullptr,
       "allocations fail with 2 cudaErrorMemoryAllocation (CUDA_ERROR_OUT_OF_MEMORY)", kGpuWorkloads,
       kServeReplicaLives, kGpuRestartAfter},
      {"gpu.slowdown", "device work takes factor times as long (thermal or power throttling)", gpu_slowdown_params(),
       kRankForms, true, false, "", &gpu_backends(), make_gpu_slowdown, nullptr, nullptr,
       "no error: kernels (and the waits for them) take factor times as long", kGpuWorkloads},
      {"gpu.hang", "a kernel never completes: device calls block while in effect", gpu_hang_params(), kRankForms,
       true, false, "", &gpu_backends(), make_gpu_hang, nullptr, nullptr,
       "no error: the call never returns (a watchdog or the collective timeout must notice)", kGpuWorkloads,
       kHangs | kServeReplicaLives, kGpuRestartAfter},
      {"gpu.bitflip", "silent data corruption: bits flipped in a tensor (gradients or parameters)",
       gpu_bitflip_params(), kRankForms, true, false, "", &gpu_backends(), make_gpu_bitflip, check_gpu_bitflip, nullptr,
       "no error: wrong values (caught only by a check such as the trainer's replica fingerprint)", "train",
       kSilentCorruption},
      {"collective.error", "an allreduce fails on the target ranks", collective_error_params(), kRankForms, true,
       false, "", &gpu_backends(), make_collective_error, nullptr, nullptr,
       "the collective returns the ncclResult_t code (2 ncclSystemError by default)", "train, command"},
      {"collective.hang", "an allreduce never returns on the target ranks", collective_hang_params(), kRankForms, true,
       false, "", &gpu_backends(), make_collective_hang, nullptr, nullptr,
       "no error: the collective blocks while in effect; peers time out", "train, command", kHangs,
       kGpuRestartAfter},
  }};
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

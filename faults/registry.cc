#include "faults/registry.h"

#include <array>
#include <fmt/format.h>

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
const std::array<FaultTypeInfo, 14>& table() {
  static const std::array<FaultTypeInfo, 14> kTable{{
      {"marker", "changes nothing; marks a window so its metrics get a phase of their own", MarkerFault::params(),
       kRankForms | TargetForm::kLinks | TargetForm::kGroups, true, false, "", make_plain<MarkerFault>},
      {"node.pause", "freezes every process of the node for the duration, then thaws it (the hung node)",
       NodePauseFault::params(), kNodeForms, true, false, "", make_plain<NodePauseFault>},
      {"node.cpu_throttle", "limits the node to a fraction of CPU for the duration (the straggler)",
       cpu_throttle_params(), kNodeForms, true, false, "cpu", make_cpu_throttle},
      {"node.memory_limit", "lowers the node's memory limit for the duration; an OOM kill ends a rank",
       memory_limit_params(), kNodeForms, true, false, "memory", make_memory_limit},
      {"node.kill", "SIGKILLs every process of the node; restart_after brings its ranks back", kill_params(),
       kNodeForms, false, false, "", make_node_kill},
      {"rank.kill", "SIGKILLs one rank's processes; restart_after brings it back", kill_params(), kRankForms, false,
       false, "", make_rank_kill},
      {"process.signal", "sends any signal to the chosen ranks", signal_params(), kRankForms, false, false, "",
       make_process_signal, check_signal},
      {kDelay, "delays the target's packets (delay, jitter, correlation) on the receiving side",
       network_delay_params(), kTrafficForms, true, true, "", make_network_delay, check_impairment, backend_of(kDelay)},
      {kLoss, "drops a share of the target's packets", network_loss_params(), kTrafficForms, true, true, "",
       make_network_loss, check_impairment, backend_of(kLoss)},
      {kRate, "limits the target's traffic to a rate (htb through netlink)", network_rate_params(), kTrafficForms, true,
       true, "", make_network_rate, check_rate, backend_of(kRate)},
      {kPartition, "cuts nodes, groups or links off from each other (symmetric or one way)",
       network_partition_params(), kPartitionForms, true, true, "", make_network_partition, check_partition,
       backend_of(kPartition)},
      {kCorrupt, "flips a bit in a share of the target's packets", network_corrupt_params(), kTrafficForms, true, true,
       "", make_network_corrupt, check_impairment, backend_of(kCorrupt)},
      {kDuplicate, "sends a share of the target's packets twice (netem only)", network_duplicate_params(),
       kTrafficForms, true, true, "", make_network_duplicate, check_impairment, backend_of(kDuplicate)},
      {kReorder, "sends a share of the target's packets ahead of the others, which are delayed",
       network_reorder_params(), kTrafficForms, true, true, "", make_network_reorder, check_impairment,
       backend_of(kReorder)},
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

}  // namespace chaosbench::faults

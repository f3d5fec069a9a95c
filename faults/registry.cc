#include "faults/registry.h"

#include <array>

#include "faults/marker/marker_fault.h"

namespace chaosbench::faults {
namespace {

constexpr std::uint32_t kNodeForms = TargetForm::kAll | TargetForm::kNodes | TargetForm::kRanks |
                                     TargetForm::kRandom | TargetForm::kPercent;

const std::array<FaultTypeInfo, 1>& table() {
  static const std::array<FaultTypeInfo, 1> kTable{{
      {"marker", "changes nothing; marks a window so its metrics get a phase of their own",
       MarkerFault::params(), kNodeForms | TargetForm::kLinks | TargetForm::kGroups,
       /*reversible=*/true, /*needs_namespaces=*/false,
       [](const Params&) -> std::unique_ptr<Fault> { return std::make_unique<MarkerFault>(); }},
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

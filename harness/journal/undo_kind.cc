#include "harness/journal/undo_kind.h"

#include <array>

#include "harness/journal/entry_checks.h"
#include "harness/journal/host_undo.h"
#include "harness/journal/netns_undo.h"
#include "harness/journal/process_group_undo.h"

namespace chaosbench::harness {
namespace {

// In UndoKind's order, so a kind's row is kUndoKinds[kind].
constexpr std::array<UndoKindRow, 9> kUndoKinds{{
    {UndoKind::kPath, "path", undo_path, check_path},
    {UndoKind::kProcessGroup, "process_group", undo_process_group, check_process_group},
    {UndoKind::kCgroup, "cgroup", undo_cgroup, check_cgroup},
    {UndoKind::kCgroupMove, "cgroup_move", undo_cgroup_move, check_cgroup_move},
    {UndoKind::kWrite, "write", undo_write, check_write},
    {UndoKind::kSignalGroup, "signal_group", undo_signal_group, check_signal_group},
    {UndoKind::kFaultControl, "fault_control", undo_fault_control, check_fault_control},
    {UndoKind::kTcRoot, "tc_root", undo_tc_root, check_tc_root},
    {UndoKind::kIptablesChain, "iptables_chain", undo_iptables_chain, check_iptables_chain},
}};

constexpr bool in_order() {
  for (std::size_t i = 0; i < kUndoKinds.size(); ++i)
    if (static_cast<std::size_t>(kUndoKinds[i].kind) != i) return false;
  return true;
}
static_assert(in_order(), "kUndoKinds rows must follow UndoKind's order");

}  // namespace

const UndoKindRow& undo_kind_row(UndoKind kind) { return kUndoKinds[static_cast<std::size_t>(kind)]; }

const UndoKindRow* find_undo_kind(std::string_view name) {
  for (const auto& row : kUndoKinds)
    if (row.name == name) return &row;
  return nullptr;
}

}  // namespace chaosbench::harness

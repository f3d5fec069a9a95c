// The kinds of journal entry (journal.h lists their fields) as a type, and the one table
// that gives each its name in the journal file, how cleanup checks it (entry_checks.h)
// and how it is undone. Adding a kind is one row of kUndoKinds (undo_kind.cc) plus its
// two functions. Names are what journal files hold: never rename one.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "harness/journal/journal.h"
#include "harness/journal/journal_reader.h"

namespace chaosbench::harness {

enum class UndoKind {
  kPath,           // "path"
  kProcessGroup,   // "process_group"
  kCgroup,         // "cgroup"
  kCgroupMove,     // "cgroup_move"
  kWrite,          // "write"
  kSignalGroup,    // "signal_group"
  kFaultControl,   // "fault_control"
  kTcRoot,         // "tc_root"
  kIptablesChain,  // "iptables_chain"
};

struct UndoKindRow {
  UndoKind kind;
  std::string_view name;  // as written in the journal file
  // Undoes the entry (see host_undo.h for the contract); dry_run only says what it would do.
  std::string (*undo)(const JournalEntry& e, bool dry_run);
  // "" when a pending entry of this kind is plausible for that journal's run, else why not.
  std::string (*check)(const JournalFile& journal, const JournalEntry& e);
};

// The row of a kind, and the row named `name` (nullptr for a kind this build does not
// know: a newer chaosbench's, or a corrupt file).
const UndoKindRow& undo_kind_row(UndoKind kind);
const UndoKindRow* find_undo_kind(std::string_view name);

// The name a kind has in the journal file.
inline std::string to_string(UndoKind kind) { return std::string(undo_kind_row(kind).name); }

}  // namespace chaosbench::harness

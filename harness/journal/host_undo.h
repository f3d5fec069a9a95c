// Undoing what a journal entry of the host's own kinds records: a path, a cgroup, the
// harness's cgroup move, a written setting, a GPU fault's control slot (journal.h lists
// their fields). Process groups and network namespaces have their own files
// (process_group_undo.h, netns_undo.h). The undo table (undo_kind.h) calls these.
//
// Each one is idempotent (what is gone needs nothing), returns what it did (or, with
// dry_run, would do) in one line, and throws std::runtime_error when undoing failed;
// std::out_of_range / std::invalid_argument when a field is missing or malformed.
#pragma once

#include <string>

#include "harness/journal/journal.h"

namespace chaosbench::harness {

std::string undo_path(const JournalEntry& e, bool dry_run);
std::string undo_cgroup(const JournalEntry& e, bool dry_run);
std::string undo_cgroup_move(const JournalEntry& e, bool dry_run);
std::string undo_write(const JournalEntry& e, bool dry_run);
std::string undo_fault_control(const JournalEntry& e, bool dry_run);

}  // namespace chaosbench::harness

// Undoing what a run changed inside one of its network namespaces, after the run died:
// "tc_root" {netns, interface, handle} and "iptables_chain" {netns, chain, hook, table}.
// The cluster's namespaces are held only by the harness and the node processes, so once
// those are gone the namespace is gone with everything in it: that is success. While a
// process of it still lives, the namespace is entered through /proc/PID/ns/net and
// exactly the journaled object is removed.
#pragma once

#include <string>

#include "harness/journal/journal.h"

namespace chaosbench::harness {

std::string undo_tc_root(const JournalEntry& e, bool dry_run);
std::string undo_iptables_chain(const JournalEntry& e, bool dry_run);

}  // namespace chaosbench::harness

// What `chaosbench cleanup` may undo for a journal: only what that journal's run can have
// created. A journal is root's, but a bug, a corrupt disk or a hand edit must not turn
// cleanup into "rm -rf /" or "kill -9 <anything>", so every entry is checked against the
// names the harness gives what it creates before it is acted on:
//   path           exactly /tmp/chaosbench-<run id> (the run's runtime directory)
//   fault_control  /tmp/chaosbench-<run id>/control/rank<N>.ctl
//   cgroup         below /sys/fs/cgroup: .../chaosbench-<run id>[/harness|/node<N>], on a
//                  cgroup file system when it exists
//   write          a cgroup knob the faults change (freezer.state, cgroup.freeze, cpu.max,
//                  ...) in such a cgroup, or cgroup.subtree_control of the cgroup that
//                  holds the run's (recorded in the same journal)
//   cgroup_move    the journal's owner (same pid and start time) from .../chaosbench-<run
//                  id>/harness back to the cgroup above chaosbench-<run id>
//   process_group, signal_group
//                  a positive pgid and a non-zero start time (0 cannot be verified);
//                  signal_group only SIGCONT; a recorded cgroup must be the run's (as
//                  for "cgroup"), since membership of it vouches for a process
//   tc_root, iptables_chain
//                  a namespace "net:[N]" with its cookie, an interface, handle or chain
//                  name; a chain's hook INPUT, FORWARD or OUTPUT and table filter or mangle
#pragma once

#include <string>

#include "harness/journal/journal_reader.h"

namespace chaosbench::harness {

// "" when `e` (pending in `journal`) is plausible, else why not (for the report): the
// check of its kind's row (undo_kind.h); an unknown kind is never plausible.
std::string check_entry(const JournalFile& journal, const JournalEntry& e);

// The checks of each kind, as listed above; the undo table names them.
std::string check_path(const JournalFile& journal, const JournalEntry& e);
std::string check_fault_control(const JournalFile& journal, const JournalEntry& e);
std::string check_cgroup(const JournalFile& journal, const JournalEntry& e);
std::string check_write(const JournalFile& journal, const JournalEntry& e);
std::string check_cgroup_move(const JournalFile& journal, const JournalEntry& e);
std::string check_process_group(const JournalFile& journal, const JournalEntry& e);
std::string check_signal_group(const JournalFile& journal, const JournalEntry& e);
std::string check_tc_root(const JournalFile& journal, const JournalEntry& e);
std::string check_iptables_chain(const JournalFile& journal, const JournalEntry& e);

}  // namespace chaosbench::harness

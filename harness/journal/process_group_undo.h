// Undoing "process_group" (SIGKILL) and "signal_group" (SIGCONT) entries after the
// harness died, without ever signalling a process that is not the run's.
//
// Which processes are the run's (the rule; a pid or pgid alone proves nothing, they are
// reused):
// - The entry must have a non-zero start time; without one nothing is signalled and the
//   entry is reported (it stays pending, cleanup exits 1).
// - Leader alive with the recorded start time: the group is still ours (the kernel does
//   not hand a group's number to anyone while the group exists, and only processes of the
//   leader's session may join it), so every member is.
// - The pid is now another process: our group emptied before its number was reused, so
//   nothing in a group of that number is ours.
// - Leader gone (the usual case: the rank died with the harness, its children live on):
//   a member of group `pgid` is ours only if it started no earlier than the leader AND
//   its environment holds the run's secret marker (kProcessMarkerEnv) or it is in the
//   node cgroup recorded with the entry. A member that fails this is reported, not
//   signalled; the entry stays pending and cleanup exits 1. (A workload that clears its
//   environment and runs without node cgroups therefore leaves orphans to be reported.)
#pragma once

#include <string>

#include "harness/journal/journal.h"

namespace chaosbench::harness {

// Set by the runner in every rank's environment to Journal::process_marker().
inline constexpr const char* kProcessMarkerEnv = "CHAOSBENCH_RUN_MARKER";

// Both throw std::runtime_error when something could not be verified or done; the
// message says which processes were left alone.
std::string undo_process_group(const JournalEntry& e, bool dry_run);
std::string undo_signal_group(const JournalEntry& e, bool dry_run);

}  // namespace chaosbench::harness

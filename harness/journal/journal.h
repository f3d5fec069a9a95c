// The run's journal: before the harness creates or changes anything on the host, it
// appends what undoing it takes and fsyncs; when it has undone it, it appends that. If the
// harness dies (SIGKILL, power), `chaosbench cleanup` replays the journals of dead runs.
// Nothing is ever found or undone by name pattern: only what a journal says.
//
// File: <journal dir>/<run id>.journal, JSON lines. The first line names the owner
// {"journal":1,"run_id","pid","start_time","out","created"}; then
// {"id":N,"op":"record","kind":K,...undo fields} and {"id":N,"op":"done"}.
// A torn last line is ignored: a record is written before acting, so a torn one means
// nothing was done; a torn "done" only makes cleanup undo again, which is idempotent.
// A torn line is only ever the last one: a failed append cuts the file back (append).
// Who may read and act on a journal: journal_reader.h, entry_checks.h.
//
// Threads: one thread writes (the runner's). Every write is durable when it returns.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <sys/types.h>
#include <vector>

#include "faults/undo_log.h"

namespace chaosbench::harness {

// Undo information: a kind and string fields. The kinds (undo_kind.h has the table that
// names, checks and undoes each):
//   "path"          {path}: remove the file or directory tree
//   "process_group" {pgid, start_time, marker[, cgroup]}: SIGKILL the process group a
//                   started process leads, only its members whose identity is verified
//                   (process_group_undo.h); marker is the run's kProcessMarkerEnv value,
//                   cgroup the node's cgroup the process was put in
//   "cgroup"        {path}: thaw, SIGKILL what is left in it (v2: cgroup.kill), rmdir
//                   (a node's cgroup); never this process itself
//   "cgroup_move"   {pid, start_time, from, to}: move that process, while it is still the
//                   same one and in cgroup `from`, back to cgroup `to` (the harness in its
//                   v2 leaf)
//   "write"         {path, value[, own_child]}: write value back (a cgroup setting a fault
//                   changed, a v2 cgroup.subtree_control); with own_child, only while
//                   that is the only directory beside `path` (a shared parent cgroup)
//   "signal_group"  {pgid, start_time, signal}: signal a process group that is still ours
//   "fault_control" {path, slot}: disarm that slot of a GPU fault control block
struct JournalEntry {
  std::uint64_t id = 0;
  std::string kind;
  std::map<std::string, std::string> fields;
};

class Journal final : public faults::UndoLog {
 public:
  // See choose_journal_directory (journal_directory.h).
  static std::string default_directory();

  // Creates the directory (0700) and the journal file with its owner line. Throws
  // HostError when it cannot, or when the directory is not this user's alone
  // (prepare_journal_directory).
  Journal(const std::string& directory, const std::string& run_id, const std::string& out_dir);
  ~Journal() override;  // closes; removes the file when nothing is pending
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // Appends (durably) what undoing an action takes; call before acting. Returns its id.
  // Throws HostError when the line is not durably in the file (short write, ENOSPC, EIO,
  // failed sync): the action must then not be taken. The file still ends with a complete
  // line (see append).
  std::uint64_t record(const std::string& kind, std::map<std::string, std::string> fields) override;
  std::uint64_t record_path(const std::string& path);
  // Reads its start time from /proc; `cgroup` is the node cgroup it is put in, if any.
  std::uint64_t record_process_group(pid_t pgid, const std::string& cgroup = "");

  // A secret of this run: every process it starts gets it in its environment
  // (kProcessMarkerEnv), so cleanup can tell the run's orphans from a stranger's.
  const std::string& process_marker() const { return marker_; }

  // Undoes entry `id` now (the same action cleanup would take) and appends "done".
  // Throws std::runtime_error when the undo fails; the entry then stays pending.
  void undo(std::uint64_t id);
  // Appends "done" without acting (the owner undid it its own way).
  void done(std::uint64_t id) override;

  // Undoes every pending entry, newest first, then removes the file. Returns the errors
  // (empty when all is undone; the file then stays for `chaosbench cleanup`).
  std::vector<std::string> finish();

  const std::string& path() const { return path_; }
  std::size_t pending() const { return pending_.size(); }

 private:
  void append(const std::string& line);
  [[noreturn]] void fail_append(off_t before, const char* what, int err);

  std::string marker_;
  std::string path_;
  bool broken_ = false;  // a failed write could not be cut off: refuse every later line
  int fd_ = -1;
  std::uint64_t next_id_ = 1;
  std::map<std::uint64_t, JournalEntry> pending_;
};

// Carries out one entry's undo. Idempotent: what is already gone is success. Returns a
// description of what it did ("removed /tmp/x", "killed process group 123 (2 processes)")
// and throws std::runtime_error when it could not.
std::string undo_entry(const JournalEntry& entry, bool dry_run);

}  // namespace chaosbench::harness

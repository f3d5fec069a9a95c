#include "harness/journal/journal.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

#include "common/process/crash_point.h"
#include "common/files/safe_files.h"
#include "harness/core/host_error.h"
#include "harness/journal/journal_directory.h"
#include "harness/journal/undo_kind.h"
#include "harness/journal/process_identity.h"
#include "harness/core/run_stamps.h"

namespace chaosbench::harness {

std::string Journal::default_directory() {
  return choose_journal_directory(::geteuid(), std::getenv("CHAOSBENCH_JOURNAL_DIR"), std::getenv("XDG_RUNTIME_DIR"));
}

Journal::Journal(const std::string& directory, const std::string& run_id, const std::string& out_dir)
    : marker_(common::random_hex(32)) {
  if (std::string why = prepare_journal_directory(directory); !why.empty()) throw HostError(why);
  path_ = fmt::format("{}/{}.journal", directory, run_id);
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd_ < 0) throw HostError(fmt::format("cannot create the journal {}: {}", path_, std::strerror(errno)));
  auto self = read_proc_stat(::getpid());
  nlohmann::ordered_json owner{{"journal", 1},
                               {"run_id", run_id},
                               {"pid", ::getpid()},
                               {"start_time", self ? self->start_time : 0},
                               {"out", out_dir},
                               {"created", utc_timestamp_iso()}};
  try {
    append(owner.dump());
  } catch (...) {
    ::close(fd_);
    ::unlink(path_.c_str());
    throw;
  }
  // The directory entry of the new file must be durable too.
  int dir_fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
  common::crash_point("journal.created");  // an owner line and nothing else
}

Journal::~Journal() {
  if (fd_ < 0) return;
  ::close(fd_);
  // Nothing left to undo (a run that stopped early): the file has no more use.
  if (pending_.empty()) ::unlink(path_.c_str());
}

// On failure the file is cut back to where this line began, so it ends with a complete
// line again, and the caller gets an exception instead of a record (it must not act).
// Cutting back rather than having the reader resynchronise at the next newline: a
// glued-on next record would still be lost to a reader that skips the torn bytes, and a
// reader that guesses where a record starts inside garbage trusts garbage. If even the
// cut fails, the journal takes no further line (broken_): a torn line stays the last one,
// which the reader ignores as an unfinished write.
void Journal::append(const std::string& line) {
  if (broken_) throw HostError(fmt::format("the journal {} could not be repaired after a failed write; nothing "
                                           "more is journaled, so nothing more is done", path_));
  const std::string data = line + "\n";
  const off_t before = ::lseek(fd_, 0, SEEK_END);
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd_, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail_append(before, "write", errno);
    if (n == 0) fail_append(before, "write", ENOSPC);
    done += static_cast<std::size_t>(n);
  }
  if (::fdatasync(fd_) != 0) fail_append(before, "sync", errno);
}

void Journal::fail_append(off_t before, const char* what, int err) {
  if (before < 0 || ::ftruncate(fd_, before) != 0 || ::fdatasync(fd_) != 0) broken_ = true;
  throw HostError(fmt::format("cannot {} the journal {}: {}{}", what, path_, std::strerror(err),
                              broken_ ? " (and cannot cut off the partial line: the journal takes nothing more)" : ""));
}

std::uint64_t Journal::record(const std::string& kind, std::map<std::string, std::string> fields) {
  JournalEntry e{next_id_++, kind, std::move(fields)};
  nlohmann::ordered_json j{{"id", e.id}, {"op", "record"}, {"kind", e.kind}};
  for (const auto& [k, v] : e.fields) j[k] = v;
  const std::string line = j.dump();
  if (common::crash_point_armed("journal.torn:" + kind)) {  // a crash test: die mid-write
    if (::write(fd_, line.data(), line.size() / 2) > 0) ::fdatasync(fd_);
    common::crash_point("journal.torn:" + kind);
  }
  append(line);
  common::crash_point("journal.recorded:" + kind);
  pending_.emplace(e.id, std::move(e));
  return next_id_ - 1;
}

std::uint64_t Journal::record_path(const std::string& path) { return record(to_string(UndoKind::kPath), {{"path", path}}); }

std::uint64_t Journal::record_process_group(pid_t pgid, const std::string& cgroup) {
  auto st = read_proc_stat(pgid);
  std::map<std::string, std::string> fields{{"pgid", std::to_string(pgid)},
                                            {"start_time", std::to_string(st ? st->start_time : 0)},
                                            {"marker", marker_}};
  if (!cgroup.empty()) fields["cgroup"] = cgroup;
  return record(to_string(UndoKind::kProcessGroup), std::move(fields));
}

void Journal::done(std::uint64_t id) {
  const auto it = pending_.find(id);
  if (it == pending_.end()) return;
  common::crash_point("journal.undone:" + it->second.kind);  // undone, "done" not yet written
  pending_.erase(it);
  append(fmt::format("{{\"id\":{},\"op\":\"done\"}}", id));
}

void Journal::undo(std::uint64_t id) {
  auto it = pending_.find(id);
  if (it == pending_.end()) return;
  undo_entry(it->second, /*dry_run=*/false);
  done(id);
}

std::vector<std::string> Journal::finish() {
  std::vector<std::uint64_t> ids;
  for (const auto& [id, e] : pending_) ids.push_back(id);
  std::vector<std::string> errors;
  for (auto it = ids.rbegin(); it != ids.rend(); ++it) {  // newest first
    try {
      undo(*it);
    } catch (const std::exception& e) {
      errors.push_back(e.what());  // stays pending: the file keeps it for cleanup
    }
  }
  if (pending_.empty()) {
    ::close(fd_);
    fd_ = -1;
    ::unlink(path_.c_str());
  }
  return errors;
}

std::string undo_entry(const JournalEntry& entry, bool dry_run) {
  const UndoKindRow* row = find_undo_kind(entry.kind);
  try {
    if (row) return row->undo(entry, dry_run);
  } catch (const std::out_of_range&) {
    throw std::runtime_error(fmt::format("journal entry {} ({}) lacks a field", entry.id, entry.kind));
  } catch (const std::invalid_argument&) {
    throw std::runtime_error(fmt::format("journal entry {} ({}) has a malformed field", entry.id, entry.kind));
  }
  throw std::runtime_error(fmt::format("journal entry {}: unknown kind \"{}\" (written by a newer chaosbench?)",
                                       entry.id, entry.kind));
}

}  // namespace chaosbench::harness

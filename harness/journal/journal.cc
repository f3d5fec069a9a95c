#include "harness/journal/journal.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include "common/fault_control.h"
#include "harness/host_error.h"
#include "common/safe_files.h"
#include "harness/journal/journal_directory.h"
#include "harness/journal/netns_undo.h"
#include "harness/journal/process_group_undo.h"
#include "harness/journal/process_identity.h"
#include "harness/runner/run_directory.h"

namespace chaosbench::harness {
namespace fs = std::filesystem;

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
  append(j.dump());
  pending_.emplace(e.id, std::move(e));
  return next_id_ - 1;
}

std::uint64_t Journal::record_path(const std::string& path) { return record("path", {{"path", path}}); }

std::uint64_t Journal::record_process_group(pid_t pgid, const std::string& cgroup) {
  auto st = read_proc_stat(pgid);
  std::map<std::string, std::string> fields{{"pgid", std::to_string(pgid)},
                                            {"start_time", std::to_string(st ? st->start_time : 0)},
                                            {"marker", marker_}};
  if (!cgroup.empty()) fields["cgroup"] = cgroup;
  return record("process_group", std::move(fields));
}

void Journal::done(std::uint64_t id) {
  if (pending_.erase(id) == 0) return;
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

namespace {

std::string undo_write(const JournalEntry& e, bool dry_run) {
  const auto& path = e.fields.at("path");
  const auto& value = e.fields.at("value");
  std::error_code ec;
  if (!fs::exists(path, ec)) return fmt::format("{}: gone; nothing to restore", path);
  if (auto own = e.fields.find("own_child"); own != e.fields.end()) {
    // Controllers enabled in a cgroup the run shares: other cgroups below it may have
    // come to use them since, and disabling them would strip their limits.
    std::vector<std::string> others;
    for (const auto& d : fs::directory_iterator(fs::path(path).parent_path(), ec))
      if (d.is_directory(ec) && d.path().filename() != own->second) others.push_back(d.path().filename().string());
    if (!others.empty())
      return fmt::format("left {} as it is: other cgroups below it ({}{}) may use what the run enabled", path,
                         others.front(), others.size() > 1 ? fmt::format(" and {} more", others.size() - 1) : "");
  }
  if (dry_run) return fmt::format("would write \"{}\" to {}", value, path);
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  ssize_t n = ::write(fd, value.data(), value.size());
  int err = errno;
  ::close(fd);
  if (n < 0) throw std::runtime_error(fmt::format("cannot write \"{}\" to {}: {}", value, path, std::strerror(err)));
  return fmt::format("restored {} to \"{}\"", path, value);
}

// A GPU fault's slot in a rank's control block: disarmed (the workload is gone by now
// anyway; this keeps a reused file from arming a new run).
std::string undo_fault_control(const JournalEntry& e, bool dry_run) {
  const auto& path = e.fields.at("path");
  const int slot = std::stoi(e.fields.at("slot"));
  if (slot < 0 || slot >= CB_FAULT_KINDS) throw std::invalid_argument("slot");
  std::error_code ec;
  // The block is a memfd of the harness that made it, reached through a link into that
  // harness's /proc/<pid>/fd: once that process is gone, the pid may be another's, and
  // its descriptor must never be opened. Only this process's own blocks are disarmed.
  const fs::path target = fs::read_symlink(path, ec);
  const std::string own = fmt::format("/proc/{}/fd/", ::getpid());
  if (ec || !target.string().starts_with(own)) return fmt::format("{}: gone with its harness; nothing to disarm", path);
  if (!fs::exists(path, ec)) return fmt::format("{}: gone; nothing to disarm", path);
  if (dry_run) return fmt::format("would disarm slot {} of {}", slot, path);
  std::string why;
  auto control = common::FaultControl::open(path, &why);
  if (!control) throw std::runtime_error(why);
  control->disarm(static_cast<cb_fault_kind>(slot));
  return fmt::format("disarmed slot {} of {}", slot, path);
}

// One small write to a kernel file; false when the file is not there or refuses it.
bool write_file(const std::string& path, const std::string& value) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::write(fd, value.data(), value.size()) == static_cast<ssize_t>(value.size());
  int err = errno;
  ::close(fd);
  errno = err;  // for the caller's message
  return ok;
}

std::string undo_cgroup(const JournalEntry& e, bool dry_run) {
  const auto& path = e.fields.at("path");
  std::error_code ec;
  if (!fs::exists(path, ec)) return fmt::format("{}: already gone", path);
  if (dry_run) return fmt::format("would empty and remove cgroup {}", path);
  // A frozen cgroup's processes cannot die: thaw first (v1 freezer.state, v2 cgroup.freeze).
  for (const auto& [file, value] : {std::pair{"freezer.state", "THAWED"}, std::pair{"cgroup.freeze", "0"}}) {
    std::string f = path + "/" + file;
    if (fs::exists(f, ec)) write_file(f, value);
  }
  // Whatever is still in it is ours: the journal says this cgroup is. Never this process
  // itself (a harness that could not leave its v2 leaf): that is an error, not a kill.
  for (int i = 0; i < 300; ++i) {
    auto pids = cgroup_members(path);
    if (pids.empty()) break;
    if (std::find(pids.begin(), pids.end(), ::getpid()) != pids.end())
      throw std::runtime_error(fmt::format("cannot remove cgroup {}: this process is still in it", path));
    // v2 (5.14+): cgroup.kill SIGKILLs the whole subtree at once, racing no fork.
    if (!write_file(path + "/cgroup.kill", "1"))
      for (pid_t p : pids) ::kill(p, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (::rmdir(path.c_str()) != 0 && errno != ENOENT)
    throw std::runtime_error(fmt::format("cannot remove cgroup {}: {}", path, std::strerror(errno)));
  return fmt::format("removed cgroup {}", path);
}

// The harness moved itself into a leaf of its run's v2 cgroup (node_cgroups.h): it goes
// back to the cgroup it came from while it is still there. A harness that is gone, or a
// pid now someone else's, needs nothing.
std::string undo_cgroup_move(const JournalEntry& e, bool dry_run) {
  const auto pid = static_cast<pid_t>(std::stol(e.fields.at("pid")));
  const auto start = std::stoull(e.fields.at("start_time"));
  const auto& from = e.fields.at("from");
  const auto& to = e.fields.at("to");
  auto st = read_proc_stat(pid);
  auto in_from = cgroup_members(from);
  if (!st || st->start_time != start || std::find(in_from.begin(), in_from.end(), pid) == in_from.end())
    return fmt::format("process {}: no longer in {}; nothing to move", pid, from);
  if (dry_run) return fmt::format("would move process {} from {} back to {}", pid, from, to);
  if (!write_file(to + "/cgroup.procs", std::to_string(pid)))
    throw std::runtime_error(fmt::format("cannot move process {} back to {}: {}", pid, to, std::strerror(errno)));
  return fmt::format("moved process {} from {} back to {}", pid, from, to);
}

std::string undo_path(const JournalEntry& e, bool dry_run) {
  const auto& path = e.fields.at("path");
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec))) return fmt::format("{}: already gone", path);
  if (dry_run) return fmt::format("would remove {}", path);
  fs::remove_all(path, ec);
  if (ec) throw std::runtime_error(fmt::format("cannot remove {}: {}", path, ec.message()));
  return fmt::format("removed {}", path);
}

}  // namespace

std::string undo_entry(const JournalEntry& entry, bool dry_run) {
  try {
    if (entry.kind == "process_group") return undo_process_group(entry, dry_run);
    if (entry.kind == "path") return undo_path(entry, dry_run);
    if (entry.kind == "cgroup") return undo_cgroup(entry, dry_run);
    if (entry.kind == "cgroup_move") return undo_cgroup_move(entry, dry_run);
    if (entry.kind == "write") return undo_write(entry, dry_run);
    if (entry.kind == "signal_group") return undo_signal_group(entry, dry_run);
    if (entry.kind == "fault_control") return undo_fault_control(entry, dry_run);
    if (entry.kind == "tc_root") return undo_tc_root(entry, dry_run);
    if (entry.kind == "iptables_chain") return undo_iptables_chain(entry, dry_run);
  } catch (const std::out_of_range&) {
    throw std::runtime_error(fmt::format("journal entry {} ({}) lacks a field", entry.id, entry.kind));
  } catch (const std::invalid_argument&) {
    throw std::runtime_error(fmt::format("journal entry {} ({}) has a malformed field", entry.id, entry.kind));
  }
  throw std::runtime_error(fmt::format("journal entry {}: unknown kind \"{}\" (written by a newer chaosbench?)",
                                       entry.id, entry.kind));
}

}  // namespace chaosbench::harness

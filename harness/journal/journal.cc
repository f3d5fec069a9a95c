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

#include "faults/gpu/fault_control.h"
#include "harness/host_error.h"
#include "harness/journal/netns_undo.h"
#include "harness/journal/process_identity.h"
#include "harness/runner/run_directory.h"

namespace chaosbench::harness {
namespace fs = std::filesystem;

std::string Journal::default_directory() {
  if (const char* dir = std::getenv("CHAOSBENCH_JOURNAL_DIR"); dir && *dir) return dir;
  if (::geteuid() == 0) return "/run/chaosbench";
  if (const char* xdg = std::getenv("XDG_RUNTIME_DIR"); xdg && *xdg) return std::string(xdg) + "/chaosbench";
  return fmt::format("/tmp/chaosbench-journal-{}", ::geteuid());
}

Journal::Journal(const std::string& directory, const std::string& run_id, const std::string& out_dir) {
  std::error_code ec;
  fs::create_directories(directory, ec);
  if (ec) throw HostError(fmt::format("cannot create the journal directory {}: {}", directory, ec.message()));
  ::chmod(directory.c_str(), 0700);
  path_ = fmt::format("{}/{}.journal", directory, run_id);
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
  if (fd_ < 0) throw HostError(fmt::format("cannot create the journal {}: {}", path_, std::strerror(errno)));
  auto self = read_proc_stat(::getpid());
  nlohmann::ordered_json owner{{"journal", 1},
                               {"run_id", run_id},
                               {"pid", ::getpid()},
                               {"start_time", self ? self->start_time : 0},
                               {"out", out_dir},
                               {"created", utc_timestamp_iso()}};
  append(owner.dump());
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

void Journal::append(const std::string& line) {
  std::string data = line + "\n";
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd_, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw HostError(fmt::format("cannot write the journal {}: {}", path_, std::strerror(errno)));
    done += static_cast<std::size_t>(n);
  }
  if (::fdatasync(fd_) != 0) throw HostError(fmt::format("cannot sync the journal {}: {}", path_, std::strerror(errno)));
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

std::uint64_t Journal::record_process_group(pid_t pgid) {
  auto st = read_proc_stat(pgid);
  return record("process_group", {{"pgid", std::to_string(pgid)},
                                  {"start_time", std::to_string(st ? st->start_time : 0)}});
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

std::string undo_process_group(const JournalEntry& e, bool dry_run);

// Members of the process group `pgid` whose leader started at `start`. The kernel never
// hands out a pid while a process group of that number exists, so while any member of
// ours lives, group `pgid` is ours; members must also have started no earlier than the
// leader. (A new group of the same number needs our group to have emptied first, and a
// stranger's leader then shows a different start time: `leader_reused`.)
std::vector<pid_t> group_members(pid_t pgid, std::uint64_t start, bool* leader_reused) {
  std::vector<pid_t> out;
  *leader_reused = false;
  for (const auto& p : list_processes()) {
    if (p.pid == pgid && p.start_time != start) *leader_reused = true;
    if (p.pgrp == pgid && p.start_time >= start && p.state != 'Z') out.push_back(p.pid);
  }
  return out;
}

std::string undo_signal_group(const JournalEntry& e, bool dry_run) {
  const auto pgid = static_cast<pid_t>(std::stol(e.fields.at("pgid")));
  const auto start = std::stoull(e.fields.at("start_time"));
  const int sig = std::stoi(e.fields.at("signal"));
  bool reused = false;
  auto members = group_members(pgid, start, &reused);
  if (reused || members.empty()) return fmt::format("process group {}: gone; no signal needed", pgid);
  if (dry_run) return fmt::format("would send signal {} to process group {}", sig, pgid);
  for (pid_t pid : members) ::kill(pid, sig);
  return fmt::format("sent signal {} to process group {}", sig, pgid);
}

std::string undo_write(const JournalEntry& e, bool dry_run) {
  const auto& path = e.fields.at("path");
  const auto& value = e.fields.at("value");
  std::error_code ec;
  if (!fs::exists(path, ec)) return fmt::format("{}: gone; nothing to restore", path);
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
  if (!fs::exists(path, ec)) return fmt::format("{}: gone; nothing to disarm", path);
  if (dry_run) return fmt::format("would disarm slot {} of {}", slot, path);
  std::string why;
  auto control = faults::gpu::FaultControl::open(path, &why);
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

std::vector<pid_t> cgroup_procs(const std::string& dir) {
  std::ifstream procs(dir + "/cgroup.procs");
  std::vector<pid_t> pids;
  pid_t pid;
  while (procs >> pid) pids.push_back(pid);
  return pids;
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
    auto pids = cgroup_procs(path);
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
  auto in_from = cgroup_procs(from);
  if (!st || st->start_time != start || std::find(in_from.begin(), in_from.end(), pid) == in_from.end())
    return fmt::format("process {}: no longer in {}; nothing to move", pid, from);
  if (dry_run) return fmt::format("would move process {} from {} back to {}", pid, from, to);
  if (!write_file(to + "/cgroup.procs", std::to_string(pid)))
    throw std::runtime_error(fmt::format("cannot move process {} back to {}: {}", pid, to, std::strerror(errno)));
  return fmt::format("moved process {} from {} back to {}", pid, from, to);
}

std::string undo_process_group(const JournalEntry& e, bool dry_run) {
  const auto pgid = static_cast<pid_t>(std::stol(e.fields.at("pgid")));
  const auto start = std::stoull(e.fields.at("start_time"));
  bool reused = false;
  auto victims = group_members(pgid, start, &reused);
  if (reused) return fmt::format("process group {}: its pid now belongs to another process; left alone", pgid);
  if (victims.empty()) return fmt::format("process group {}: already gone", pgid);
  const char* plural = victims.size() == 1 ? "" : "es";
  if (dry_run) return fmt::format("would kill process group {} ({} process{})", pgid, victims.size(), plural);
  // A stopped process dies on SIGKILL too; a frozen one only once its cgroup is thawed:
  // the pause's "write THAWED" entry is newer than the processes it froze, so it is
  // undone first, and the node's cgroup entry (older) kills whatever is left after.
  for (pid_t pid : victims) ::kill(pid, SIGKILL);
  // Not our children (the harness that started them is gone): wait until they vanish.
  for (int i = 0; i < 200; ++i) {
    bool alive = false;
    for (pid_t pid : victims) {
      auto st = read_proc_stat(pid);
      alive = alive || (st && st->state != 'Z' && st->pgrp == pgid);
    }
    if (!alive) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return fmt::format("killed process group {} ({} process{})", pgid, victims.size(), plural);
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

#include "harness/journal/host_undo.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <stdexcept>
#include <thread>
#include <unistd.h>

#include "common/gpu/fault_control.h"
#include "harness/journal/process_identity.h"

namespace chaosbench::harness {
namespace fs = std::filesystem;
namespace {

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

}  // namespace

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
  // Gone meanwhile (another cleanup of the same journal got there first): what is already
  // gone is success.
  if (ec == std::errc::no_such_file_or_directory) return fmt::format("{}: already gone", path);
  if (ec) throw std::runtime_error(fmt::format("cannot remove {}: {}", path, ec.message()));
  return fmt::format("removed {}", path);
}

}  // namespace chaosbench::harness

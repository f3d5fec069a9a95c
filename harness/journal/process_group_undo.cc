#include "harness/journal/process_group_undo.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <stdexcept>
#include <sys/syscall.h>
#include <thread>
#include <unistd.h>

#include "harness/journal/process_identity.h"

namespace chaosbench::harness {
namespace {

struct Member {
  pid_t pid = 0;
  std::uint64_t start_time = 0;  // as scanned: the process is signalled only while it is still this one
};

struct GroupScan {
  pid_t pgid = 0;
  std::vector<Member> ours;       // verified: may be signalled
  std::vector<pid_t> unverified;  // in group pgid, cannot be told from a stranger's
};

// Signals `m` only if its pid still names the process scanned: a pidfd pins the process,
// then its start time is read again, so a pid reused after the scan is never hit.
// Falls back to kill() after the same check where pidfd_open is missing (before 5.3).
void signal_member(const Member& m, int sig) {
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, m.pid, 0));
  auto st = read_proc_stat(m.pid);
  const bool same = st && st->start_time == m.start_time;
  if (pidfd >= 0) {
    if (same) ::syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0);
    ::close(pidfd);
  } else if (same) {
    ::kill(m.pid, sig);
  }
}

// The members of group `pgid` sorted by the rule in process_group_undo.h.
GroupScan scan_group(const JournalEntry& e) {
  GroupScan g;
  g.pgid = static_cast<pid_t>(std::stol(e.fields.at("pgid")));
  const auto start = std::stoull(e.fields.at("start_time"));
  if (g.pgid <= 1 || start == 0)
    throw std::runtime_error(fmt::format("process group {}: no start time recorded, so its processes cannot be "
                                         "verified as the run's; left alone", e.fields.at("pgid")));
  const auto marker_field = e.fields.find("marker");
  const std::string marker = marker_field == e.fields.end() || marker_field->second.empty()
                                 ? ""
                                 : std::string(kProcessMarkerEnv) + "=" + marker_field->second;
  const auto cgroup_field = e.fields.find("cgroup");
  const auto in_cgroup = cgroup_field == e.fields.end() ? std::vector<pid_t>{} : cgroup_members(cgroup_field->second);
  bool leader_ours = false;
  std::vector<ProcStat> members;
  for (const auto& p : list_processes()) {
    if (p.pid == g.pgid && p.start_time != start) return g;  // the number is someone else's now
    if (p.pid == g.pgid) leader_ours = true;
    if (p.pgrp == g.pgid && p.state != 'Z') members.push_back(p);
  }
  for (const auto& p : members) {
    if (leader_ours) {
      g.ours.push_back({p.pid, p.start_time});
    } else if (p.start_time >= start) {
      const bool marked = !marker.empty() && environ_has(p.pid, marker);
      const bool contained = std::find(in_cgroup.begin(), in_cgroup.end(), p.pid) != in_cgroup.end();
      if (marked || contained) g.ours.push_back({p.pid, p.start_time});
      else g.unverified.push_back(p.pid);
    }  // started before our leader: cannot be its descendant
  }
  return g;
}

[[noreturn]] void report_unverified(const GroupScan& g, const std::string& done) {
  throw std::runtime_error(fmt::format("process group {}: {}left alone process{} {} (leader gone; neither the run's "
                                       "marker nor its cgroup identifies them as the run's)",
                                       g.pgid, done, g.unverified.size() == 1 ? "" : "es",
                                       fmt::join(g.unverified, ", ")));
}

}  // namespace

std::string undo_signal_group(const JournalEntry& e, bool dry_run) {
  const int sig = std::stoi(e.fields.at("signal"));
  const GroupScan g = scan_group(e);
  // Only the leader's start time is recorded here: leaderless members of a paused group
  // stay stopped, and the group's "process_group" entry kills the verified ones.
  if (g.ours.empty()) return fmt::format("process group {}: gone; no signal needed", g.pgid);
  if (dry_run) return fmt::format("would send signal {} to process group {}", sig, g.pgid);
  for (const Member& m : g.ours) signal_member(m, sig);
  return fmt::format("sent signal {} to process group {}", sig, g.pgid);
}

std::string undo_process_group(const JournalEntry& e, bool dry_run) {
  const GroupScan g = scan_group(e);
  const auto& victims = g.ours;
  const char* plural = victims.size() == 1 ? "" : "es";
  if (victims.empty() && g.unverified.empty()) return fmt::format("process group {}: already gone", g.pgid);
  if (dry_run) {
    if (!g.unverified.empty()) report_unverified(g, fmt::format("would kill {} process{}, ", victims.size(), plural));
    return fmt::format("would kill process group {} ({} process{})", g.pgid, victims.size(), plural);
  }
  // A stopped process dies on SIGKILL too; a frozen one only once its cgroup is thawed:
  // the pause's "write THAWED" entry is newer than the processes it froze, so it is
  // undone first, and the node's cgroup entry (older) kills whatever is left after.
  for (const Member& m : victims) signal_member(m, SIGKILL);
  // Not our children (the harness that started them is gone): wait until they vanish.
  for (int i = 0; i < 200; ++i) {
    bool alive = false;
    for (const Member& m : victims) {
      auto st = read_proc_stat(m.pid);
      alive = alive || (st && st->start_time == m.start_time && st->state != 'Z' && st->pgrp == g.pgid);
    }
    if (!alive) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!g.unverified.empty()) report_unverified(g, fmt::format("killed {} process{}; ", victims.size(), plural));
  return fmt::format("killed process group {} ({} process{})", g.pgid, victims.size(), plural);
}

}  // namespace chaosbench::harness

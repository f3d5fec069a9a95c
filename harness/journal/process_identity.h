// Telling a process apart from a later one with the same pid: its start time (clock ticks
// since boot, /proc/PID/stat field 22) never repeats for a reused pid. The journal keeps
// (pid, start time) so cleanup never signals a stranger.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace chaosbench::harness {

struct ProcStat {
  pid_t pid = 0;
  char state = 0;  // 'R', 'S', 'Z', ...
  pid_t ppid = 0;
  pid_t pgrp = 0;
  std::uint64_t start_time = 0;
};

// nullopt when the process does not exist (or /proc is unreadable).
std::optional<ProcStat> read_proc_stat(pid_t pid);

// Every process visible in /proc.
std::vector<ProcStat> list_processes();

// True when `pid` runs and started at `start_time`. A zombie does not run: it can no longer
// act or write its journal, and where pid 1 does not reap (a container's or a VM's init),
// a killed process may stay one for good after its parent exits (a dead agent whose sshd
// session ended before reaping it). A thread group whose leader exited while other
// threads go on runs.
bool same_process(pid_t pid, std::uint64_t start_time);

// True when the environment `pid` was started with holds exactly `entry` ("NAME=value").
// Reads at most 1 MiB of /proc/PID/environ (root or the process's owner may read it).
bool environ_has(pid_t pid, const std::string& entry);

// The pids in cgroup `dir` (its cgroup.procs); empty when it is gone.
std::vector<pid_t> cgroup_members(const std::string& dir);

}  // namespace chaosbench::harness

#include "harness/journal/process_identity.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace chaosbench::harness {

std::optional<ProcStat> read_proc_stat(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  // "pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime
  //  stime cutime cstime priority nice num_threads itrealvalue starttime ...": comm may
  // hold spaces and parentheses, so parse from the last ')'.
  auto close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(line.substr(close + 1));
  ProcStat st;
  st.pid = pid;
  rest >> st.state >> st.ppid >> st.pgrp;
  std::string skip;
  for (int field = 6; field < 22 && rest; ++field) rest >> skip;  // session .. itrealvalue
  rest >> st.start_time;
  if (!rest) return std::nullopt;
  return st;
}

std::vector<ProcStat> list_processes() {
  std::vector<ProcStat> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const auto name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (auto st = read_proc_stat(static_cast<pid_t>(std::stol(name)))) out.push_back(*st);
  }
  return out;
}

namespace {

// True when some thread of `pid`'s group other than its leader is still there (the leader
// of a live multithreaded process may show 'Z' after it exited alone).
bool other_threads_live(pid_t pid) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec))
    if (entry.path().filename().string() != std::to_string(pid)) return true;
  return false;
}

}  // namespace

bool same_process(pid_t pid, std::uint64_t start_time) {
  auto st = read_proc_stat(pid);
  if (!st || st->start_time != start_time) return false;
  return st->state != 'Z' || other_threads_live(pid);
}

bool environ_has(pid_t pid, const std::string& entry) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  std::string var;
  std::size_t total = 0;
  while (total < (1u << 20) && std::getline(in, var, '\0')) {
    if (var == entry) return true;
    total += var.size() + 1;
  }
  return false;
}

std::vector<pid_t> cgroup_members(const std::string& dir) {
  std::ifstream procs(dir + "/cgroup.procs");
  std::vector<pid_t> pids;
  pid_t pid;
  while (procs >> pid) pids.push_back(pid);
  return pids;
}

}  // namespace chaosbench::harness

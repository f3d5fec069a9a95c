#include "harness/process/process_supervisor.h"

#include "common/process/crash_point.h"
#include "harness/process/process_child.h"

#include <cerrno>
#include <sched.h>
#include <sys/resource.h>
#include <sstream>
#include <fstream>
#include <filesystem>
#include <csignal>
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <pthread.h>
#include <spdlog/spdlog.h>
#include <stdexcept>
#include <string_view>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <system_error>
#include <thread>
#include <unistd.h>


namespace chaosbench::harness {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// How long stop_all() keeps sweeping for exits after SIGKILL; killed processes are gone
// within milliseconds, so this only bounds the wait when something escaped its group.
constexpr auto kSweepBound = milliseconds(2000);
constexpr auto kStopStep = milliseconds(5);
constexpr std::size_t kMaxOtherExits = 1024;

using common::errno_text;

// Keeps the error pipe off descriptors 0-2, which the child overwrites before exec.
int above_stdio(int fd) {
  if (fd > STDERR_FILENO) return fd;
  int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  ::close(fd);
  return moved;
}

int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  return -1;
#endif
}

}  // namespace

ProcessSupervisor::ProcessSupervisor() {
  errno = 0;
  int nice = ::getpriority(PRIO_PROCESS, 0);
  child_nice_ = errno == 0 ? nice : 0;
  // Orphaned grandchildren of workloads are reparented to the harness instead of init, so
  // stop_all() can reap them and nothing of the run outlives it unnoticed.
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
    spdlog::warn("process supervisor: cannot become a child subreaper: {}", errno_text(errno));
  }
}

ProcessSupervisor::~ProcessSupervisor() {
  try {
    stop_all();
  } catch (const std::exception& e) {
    spdlog::error("process supervisor: stopping processes failed: {}", e.what());
  } catch (...) {
  }
  for (auto& [pid, fd] : pidfds_) ::close(fd);
}

namespace {

// The error pipe the child reports a failure through, and the go pipe it waits on (only
// with an on_forked hook), all close-on-exec and above descriptors 0-2.
struct StartPipes {
  int read_fd = -1, write_fd = -1, go_read = -1, go_write = -1;
  void close_all() {
    for (int* fd : {&read_fd, &write_fd, &go_read, &go_write}) {
      if (*fd >= 0) ::close(*fd);
      *fd = -1;
    }
  }
};

// Throws std::runtime_error naming `program` when a pipe cannot be made.
StartPipes open_start_pipes(bool with_go, const std::string& program) {
  StartPipes p;
  auto make = [&](int& r, int& w) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return errno;
    r = above_stdio(fds[0]);
    w = above_stdio(fds[1]);
    return r < 0 || w < 0 ? errno : 0;
  };
  int err = make(p.read_fd, p.write_fd);
  if (err == 0 && with_go) err = make(p.go_read, p.go_write);
  if (err != 0) {
    p.close_all();
    throw std::runtime_error(fmt::format("cannot start '{}': pipe: {}", program, errno_text(err)));
  }
  return p;
}

void wait_for(pid_t pid) {
  int ignored;
  while (::waitpid(pid, &ignored, 0) < 0 && errno == EINTR) {
  }
}

child::ChildPlan plan_for(const ProcessSpec& spec, const child::ExecImage& image, const StartPipes& pipes, int nice) {
  child::ChildPlan plan{};
  plan.go_fd = pipes.go_read;
  plan.go_write_fd = pipes.go_write;
  plan.nice = nice;
  plan.netns_fd = spec.netns_fd;
  plan.path = image.path.c_str();
  plan.argv = image.argv.data();
  plan.envp = image.envp.data();
  plan.stdout_path = spec.stdout_path.empty() ? nullptr : spec.stdout_path.c_str();
  plan.stderr_path = spec.stderr_path.empty() ? nullptr : spec.stderr_path.c_str();
  plan.shared_log = !spec.stdout_path.empty() && spec.stdout_path == spec.stderr_path;
  plan.cwd = image.cwd.empty() ? nullptr : image.cwd.c_str();
  plan.uts_fd = spec.uts_fd;
  plan.mnt_fd = spec.mnt_fd;
  plan.stdin_fd = spec.stdin_fd;
  plan.death_signal = spec.death_signal;
  plan.parent = ::getpid();
  plan.error_fd = pipes.write_fd;
  plan.default_action.sa_handler = SIG_DFL;
  sigemptyset(&plan.default_action.sa_mask);
  sigemptyset(&plan.empty_mask);
  return plan;
}

}  // namespace

pid_t ProcessSupervisor::start(const ProcessSpec& spec) {
  child::ExecImage image;
  child::make_exec_image(spec, image);
  const std::string& program = spec.argv[0];
  StartPipes pipes = open_start_pipes(static_cast<bool>(on_forked_), program);
  const child::ChildPlan plan = plan_for(spec, image, pipes, child_nice_);

  sigset_t all, saved;
  sigfillset(&all);
  ::pthread_sigmask(SIG_BLOCK, &all, &saved);
  pid_t pid = ::fork();
  if (pid == 0) child::child_main(plan);
  int fork_err = errno;
  ::pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  ::close(pipes.write_fd);
  pipes.write_fd = -1;
  if (pid < 0) {
    pipes.close_all();
    throw std::runtime_error(fmt::format("cannot start '{}': fork: {}", program, errno_text(fork_err)));
  }
  // Also here, so that a signal() right after start() reaches the group even when the
  // child has not run yet. EACCES: it already exec'd (and set it itself).
  ::setpgid(pid, pid);
  common::crash_point("supervisor.forked");  // forked, not yet journaled nor running
  if (pipes.go_read >= 0) {
    ::close(pipes.go_read);
    pipes.go_read = -1;
    try {
      on_forked_(pid);
    } catch (...) {
      pipes.close_all();  // EOF on the go pipe: the child exits without running anything
      wait_for(pid);
      throw;
    }
    char go = 1;
    while (::write(pipes.go_write, &go, 1) < 0 && errno == EINTR) {
    }
    ::close(pipes.go_write);
    pipes.go_write = -1;
  }
  child::ChildError error{};
  ssize_t n;
  do {
    n = ::read(pipes.read_fd, &error, sizeof(error));
  } while (n < 0 && errno == EINTR);
  pipes.close_all();
  if (n == static_cast<ssize_t>(sizeof(error))) {
    wait_for(pid);
    throw std::runtime_error(fmt::format("cannot start '{}': {}", program,
                                         child::stage_message(static_cast<child::Stage>(error.stage), spec, error.err)));
  }
  processes_[pid] = ProcessStatus{pid, true, std::nullopt, std::nullopt};
  live_groups_.insert(pid);
  common::crash_point("supervisor.started");
  if (int fd = open_pidfd(pid); fd >= 0) pidfds_[pid] = fd;
  return pid;
}

void ProcessSupervisor::record_exit(pid_t pid, int wait_status, std::vector<pid_t>* changed) {
  auto it = processes_.find(pid);
  if (it == processes_.end() || !it->second.running) {
    other_exits_.emplace_back(pid, wait_status);
    if (other_exits_.size() > kMaxOtherExits) other_exits_.pop_front();
    return;
  }
  ProcessStatus& st = it->second;
  if (WIFEXITED(wait_status)) {
    st.exit_code = WEXITSTATUS(wait_status);
  } else if (WIFSIGNALED(wait_status)) {
    st.signal = WTERMSIG(wait_status);
  } else {
    return;  // stopped or continued: still running
  }
  st.running = false;
  if (auto fd = pidfds_.find(pid); fd != pidfds_.end()) {
    ::close(fd->second);
    pidfds_.erase(fd);
  }
  if (changed != nullptr) changed->push_back(pid);
}

void ProcessSupervisor::reap(std::vector<pid_t>* changed) {
  // Each started process by pid, in case it moved to another group...
  for (auto& [pid, st] : processes_) {
    if (!st.running) continue;
    int ws;
    pid_t r;
    do {
      r = ::waitpid(pid, &ws, WNOHANG);
    } while (r < 0 && errno == EINTR);
    if (r == pid) {
      record_exit(pid, ws, changed);
    } else if (r < 0 && errno == ECHILD) {
      // Someone else reaped it (a waitpid(-1) elsewhere): the status is lost, but it is
      // gone, and waiting on its pidfd would spin.
      st.running = false;
      if (auto fd = pidfds_.find(pid); fd != pidfds_.end()) {
        ::close(fd->second);
        pidfds_.erase(fd);
      }
      if (changed != nullptr) changed->push_back(pid);
    }
  }
  // ...then each group, which is where orphaned grandchildren turn up.
  for (auto g = live_groups_.begin(); g != live_groups_.end();) {
    bool empty = false;
    for (;;) {
      int ws;
      pid_t r = ::waitpid(-*g, &ws, WNOHANG);
      if (r > 0) {
        record_exit(r, ws, changed);
        continue;
      }
      if (r < 0 && errno == EINTR) continue;
      empty = r < 0;  // ECHILD: no child of ours is left in this group
      break;
    }
    if (empty && !processes_.at(*g).running) {
      g = live_groups_.erase(g);
    } else {
      ++g;
    }
  }
}

std::vector<pid_t> ProcessSupervisor::poll() {
  std::vector<pid_t> changed;
  reap(&changed);
  return changed;
}

std::vector<pid_t> ProcessSupervisor::wait_any(milliseconds timeout) {
  std::vector<pid_t> changed = poll();
  const auto deadline = Clock::now() + timeout;
  while (changed.empty() && any_running()) {
    auto left = std::chrono::ceil<milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) break;
    std::vector<pollfd> fds;
    bool all_have_pidfd = true;
    for (const auto& [pid, st] : processes_) {
      if (!st.running) continue;
      auto fd = pidfds_.find(pid);
      if (fd == pidfds_.end()) {
        all_have_pidfd = false;
      } else {
        fds.push_back(pollfd{fd->second, POLLIN, 0});
      }
    }
    // Without pidfds (kernels before 5.3) fall back to checking every 10 ms.
    auto wait_ms = all_have_pidfd ? left.count() : std::min<long long>(left.count(), 10);
    // A signal (EINTR) ends the wait early so the caller sees SIGINT/SIGTERM at once.
    bool interrupted = ::poll(fds.data(), fds.size(), static_cast<int>(wait_ms)) < 0 && errno == EINTR;
    changed = poll();
    if (interrupted) break;
  }
  return changed;
}

const ProcessStatus& ProcessSupervisor::status(pid_t pid) const {
  auto it = processes_.find(pid);
  if (it == processes_.end()) {
    throw std::out_of_range(fmt::format("process supervisor: pid {} was not started here", pid));
  }
  return it->second;
}

bool ProcessSupervisor::any_running() const {
  for (const auto& [pid, st] : processes_) {
    if (st.running) return true;
  }
  return false;
}

std::vector<pid_t> ProcessSupervisor::pids() const {
  std::vector<pid_t> out;
  out.reserve(processes_.size());
  for (const auto& [pid, st] : processes_) out.push_back(pid);
  return out;
}

void ProcessSupervisor::signal(pid_t pid, int sig) {
  auto it = processes_.find(pid);
  if (it == processes_.end() || !it->second.running) return;
  // Unreaped, so the pid (and the group id) cannot have been recycled yet.
  if (::kill(-pid, sig) != 0 && errno == ESRCH) ::kill(pid, sig);  // it left its group
}

void ProcessSupervisor::signal_groups(int sig) {
  reap(nullptr);  // drops groups that are empty, whose ids could be recycled
  for (pid_t g : live_groups_) {
    if (::kill(-g, sig) != 0 && errno == ESRCH && processes_.at(g).running) ::kill(g, sig);
  }
}

void ProcessSupervisor::sweep_children() {
  const auto deadline = Clock::now() + kSweepBound;
  for (;;) {
    reap(nullptr);
    bool no_children = false;
    for (;;) {
      int ws;
      pid_t r = ::waitpid(-1, &ws, WNOHANG);
      if (r > 0) {
        record_exit(r, ws, nullptr);
        continue;
      }
      if (r < 0 && errno == EINTR) continue;
      no_children = r < 0;
      break;
    }
    // What still runs outside our groups is either another component's child or a
    // process that left its group (setsid); neither is ours to kill.
    if (no_children || live_groups_.empty()) return;
    if (Clock::now() >= deadline) {
      spdlog::warn("process supervisor: {} process group(s) still not empty after SIGKILL",
                   live_groups_.size());
      return;
    }
    std::this_thread::sleep_for(kStopStep);
  }
}

void ProcessSupervisor::stop_all(milliseconds grace) {
  signal_groups(SIGTERM);
  // A rank paused by a fault (SIGSTOP) would sit on SIGTERM until SIGKILL; let it act on it.
  signal_groups(SIGCONT);
  const auto deadline = Clock::now() + grace;
  while (!live_groups_.empty() && Clock::now() < deadline) {
    std::this_thread::sleep_for(kStopStep);
    reap(nullptr);
  }
  signal_groups(SIGKILL);
  sweep_children();
  // After the groups are empty, their members' exits have reparented any escaped
  // descendant to us (subreaper), so the scan below sees it.
  if (kill_adopted_orphans_) kill_adopted_orphans();
}

void ProcessSupervisor::kill_adopted_orphans() {
  // Direct children found through /proc (their parent is us); the started ones are gone
  // by now, so whatever is left was adopted. Bounded: a daemon that keeps forking is
  // caught in a few rounds because each round kills every child seen.
  const pid_t self = ::getpid();
  for (int round = 0; round < 5; ++round) {
    std::vector<pid_t> orphans;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
      const auto name = entry.path().filename().string();
      if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
      std::ifstream stat(entry.path() / "stat");
      std::string line;
      if (!std::getline(stat, line)) continue;
      // "pid (comm) state ppid ...": comm may hold spaces and parentheses; skip to the last ')'.
      auto close = line.rfind(')');
      if (close == std::string::npos) continue;
      std::istringstream rest(line.substr(close + 1));
      char state = 0;
      pid_t ppid = 0;
      rest >> state >> ppid;
      pid_t pid = static_cast<pid_t>(std::stol(name));
      if (ppid == self && state != 'Z' && processes_.find(pid) == processes_.end()) orphans.push_back(pid);
    }
    if (orphans.empty()) return;
    for (pid_t pid : orphans) {
      spdlog::debug("process supervisor: killing adopted orphan {}", pid);
      ::kill(pid, SIGKILL);
    }
    std::this_thread::sleep_for(kStopStep);
    reap(nullptr);
    int ws;
    while (::waitpid(-1, &ws, WNOHANG) > 0) {
    }
  }
}

}  // namespace chaosbench::harness

#include "harness/runner/process_supervisor.h"

#include "common/program_path.h"
#include "common/safe_files.h"

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

#if __has_include(<linux/close_range.h>)
#include <linux/close_range.h>
#endif

extern char** environ;

namespace chaosbench::harness {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// How long stop_all() keeps sweeping for exits after SIGKILL; killed processes are gone
// within milliseconds, so this only bounds the wait when something escaped its group.
constexpr auto kSweepBound = milliseconds(2000);
constexpr auto kStopStep = milliseconds(5);
constexpr std::size_t kMaxOtherExits = 1024;

std::string errno_text(int err) { return std::system_category().message(err); }

// What failed in the child before exec; sent to the parent through the close-on-exec pipe
// as one 8-byte write (atomic on a pipe), so the parent reads all of it or nothing.
enum class Stage : int { kDeathSignal = 1, kStdin, kStdout, kStderr, kCwd, kExec, kNetns, kUtsns, kMntns };
struct ChildError {
  int stage;
  int err;
};

// Everything the child needs, prepared before fork() because the child of a threaded
// process may only make async-signal-safe calls (no allocation, no locks).
struct ChildPlan {
  const char* path;
  char* const* argv;
  char* const* envp;
  const char* stdout_path;  // null: /dev/null
  const char* stderr_path;
  bool shared_log;
  const char* cwd;  // nullptr: stay
  pid_t parent;
  int error_fd;
  int go_fd;        // -1, or a pipe the child reads one byte from before exec (see on_forked)
  int go_write_fd;  // the pipe's write end: the child closes its copy, so EOF can reach it
  int nice;   // the workload's nice value: the harness may run at a higher priority
  int netns_fd;  // -1, or the node's network namespace
  int uts_fd;    // -1, or the node's UTS namespace
  int mnt_fd;    // -1, or the node's mount namespace
  struct sigaction default_action;
  sigset_t empty_mask;
};

[[noreturn]] void child_fail(int fd, Stage stage, int err) {
  ChildError e{static_cast<int>(stage), err};
  ssize_t n;
  do {
    n = ::write(fd, &e, sizeof(e));
  } while (n < 0 && errno == EINTR);
  ::_exit(127);
}

// Opens the log `path` onto `target`, or /dev/null when `path` is null; returns 0 or the
// errno. A log is created fresh (common::create_file_fresh), so a link planted under its
// name is never followed.
int redirect(const char* path, int target) {
  int fd = path != nullptr ? common::create_file_fresh(path) : ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (fd < 0) return path != nullptr ? -fd : errno;
  if (fd == target) return ::fcntl(fd, F_SETFD, 0) == 0 ? 0 : errno;  // keep it across exec
  int rc = ::dup2(fd, target);  // the duplicate does not inherit O_CLOEXEC
  int err = errno;
  ::close(fd);
  return rc < 0 ? err : 0;
}

[[noreturn]] void child_main(const ChildPlan& p) {
  ::setpgid(0, 0);  // the parent does the same; whichever runs first wins the race
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) child_fail(p.error_fd, Stage::kDeathSignal, errno);
  // The harness may have died before prctl took effect; then nobody would kill us later.
  if (::getppid() != p.parent) ::_exit(127);
  // Dispositions first, while every signal is still blocked (the parent blocked them
  // around fork), so no harness handler can run in the child.
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::sigaction(sig, &p.default_action, nullptr);
  }
  ::sigprocmask(SIG_SETMASK, &p.empty_mask, nullptr);
  ::setpriority(PRIO_PROCESS, 0, p.nice);  // best effort: never inherit the harness's boost
  if (int err = redirect(nullptr, STDIN_FILENO)) {
    child_fail(p.error_fd, Stage::kStdin, err);
  }
  if (int err = redirect(p.stdout_path, STDOUT_FILENO)) {
    child_fail(p.error_fd, Stage::kStdout, err);
  }
  if (p.shared_log) {
    if (::dup2(STDOUT_FILENO, STDERR_FILENO) < 0) child_fail(p.error_fd, Stage::kStderr, errno);
  } else if (int err = redirect(p.stderr_path, STDERR_FILENO)) {
    child_fail(p.error_fd, Stage::kStderr, err);
  }
#if defined(SYS_close_range) && defined(CLOSE_RANGE_CLOEXEC)
  // Descriptors the harness opened without O_CLOEXEC must not leak into workloads. Best
  // effort: kernels before 5.11 lack the flag, and then only O_CLOEXEC protects.
  ::syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
#endif
  // Entering a mount namespace moves the process to its root, so the directory comes after.
  if (p.mnt_fd >= 0 && ::setns(p.mnt_fd, CLONE_NEWNS) != 0) child_fail(p.error_fd, Stage::kMntns, errno);
  if (p.uts_fd >= 0 && ::setns(p.uts_fd, CLONE_NEWUTS) != 0) child_fail(p.error_fd, Stage::kUtsns, errno);
  if (p.cwd != nullptr && ::chdir(p.cwd) != 0) child_fail(p.error_fd, Stage::kCwd, errno);
  if (p.netns_fd >= 0 && ::setns(p.netns_fd, CLONE_NEWNET) != 0) child_fail(p.error_fd, Stage::kNetns, errno);
  if (p.go_fd >= 0) {
    ::close(p.go_write_fd);
    // Wait until the parent has recorded us (journal): EOF means it gave up or died.
    char go = 0;
    ssize_t r;
    do {
      r = ::read(p.go_fd, &go, 1);
    } while (r < 0 && errno == EINTR);
    if (r != 1) ::_exit(127);
  }
  ::execve(p.path, p.argv, p.envp);
  child_fail(p.error_fd, Stage::kExec, errno);
}

// The harness's environment with the spec's variables added or replaced.
std::map<std::string, std::string> merged_environment(const ProcessSpec& spec) {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view kv(*e);
    auto eq = kv.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    env.emplace(kv.substr(0, eq), kv.substr(eq + 1));  // first definition wins, as getenv
  }
  for (const auto& [k, v] : spec.env) env[k] = v;
  return env;
}

std::string stage_message(Stage stage, const ProcessSpec& spec, int err) {
  switch (stage) {
    case Stage::kDeathSignal:
      return fmt::format("prctl(PR_SET_PDEATHSIG): {}", errno_text(err));
    case Stage::kStdin:
      return fmt::format("cannot open /dev/null: {}", errno_text(err));
    case Stage::kStdout:
      return fmt::format("cannot open stdout file '{}': {}", spec.stdout_path, errno_text(err));
    case Stage::kStderr:
      return fmt::format("cannot open stderr file '{}': {}", spec.stderr_path, errno_text(err));
    case Stage::kCwd:
      return fmt::format("cannot change directory to '{}': {}", spec.cwd, errno_text(err));
    case Stage::kNetns:
      return fmt::format("cannot enter its node's network namespace: {}", errno_text(err));
    case Stage::kUtsns:
      return fmt::format("cannot enter its node's UTS namespace: {}", errno_text(err));
    case Stage::kMntns:
      return fmt::format("cannot enter its node's mount namespace: {}", errno_text(err));
    case Stage::kExec:
      break;
  }
  return errno_text(err);
}

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

pid_t ProcessSupervisor::start(const ProcessSpec& spec) {
  if (spec.argv.empty()) {
    throw std::runtime_error(fmt::format("cannot start '{}': argv is empty", spec.name));
  }
  const std::string& program = spec.argv[0];
  auto failure = [&](std::string_view why) {
    return std::runtime_error(fmt::format("cannot start '{}': {}", program, why));
  };

  auto env = merged_environment(spec);
  for (const auto& [k, v] : spec.env) {
    if (k.empty() || k.find('=') != std::string::npos) {
      throw failure(fmt::format("invalid environment variable name '{}'", k));
    }
  }
  auto path_it = env.find("PATH");
  int resolve_err = 0;
  std::string path = common::resolve_program(program, path_it != env.end() ? path_it->second : "/bin:/usr/bin",
                                     spec.cwd, resolve_err);
  if (path.empty()) throw failure(errno_text(resolve_err));

  std::vector<std::string> argv_storage(spec.argv.begin(), spec.argv.end());
  std::vector<char*> argv;
  for (auto& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_storage;
  env_storage.reserve(env.size());
  for (const auto& [k, v] : env) env_storage.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);

  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw failure(fmt::format("pipe: {}", errno_text(errno)));
  int read_fd = above_stdio(pipe_fds[0]);
  int write_fd = above_stdio(pipe_fds[1]);
  if (read_fd < 0 || write_fd < 0) {
    int err = errno;
    if (read_fd >= 0) ::close(read_fd);
    if (write_fd >= 0) ::close(write_fd);
    throw failure(fmt::format("pipe: {}", errno_text(err)));
  }

  int go_read = -1, go_write = -1;
  if (on_forked_) {
    int go_fds[2];
    if (::pipe2(go_fds, O_CLOEXEC) != 0) {
      int err = errno;
      ::close(read_fd);
      ::close(write_fd);
      throw failure(fmt::format("pipe: {}", errno_text(err)));
    }
    go_read = above_stdio(go_fds[0]);
    go_write = above_stdio(go_fds[1]);
  }

  ChildPlan plan{};
  plan.go_fd = go_read;
  plan.go_write_fd = go_write;
  plan.nice = child_nice_;
  plan.netns_fd = spec.netns_fd;
  plan.path = path.c_str();
  plan.argv = argv.data();
  plan.envp = envp.data();
  plan.stdout_path = spec.stdout_path.empty() ? nullptr : spec.stdout_path.c_str();
  plan.stderr_path = spec.stderr_path.empty() ? nullptr : spec.stderr_path.c_str();
  plan.shared_log = !spec.stdout_path.empty() && spec.stdout_path == spec.stderr_path;
  // In another mount namespace the process starts at its root: it goes to the harness's
  // directory, or the spec's resolved against it (the namespace is a copy of the harness's).
  std::string cwd = spec.cwd;
  if (spec.mnt_fd >= 0 && (cwd.empty() || cwd.front() != '/')) {
    std::error_code ec;
    const auto here = std::filesystem::current_path(ec);
    if (!ec) cwd = (cwd.empty() ? here : (here / cwd).lexically_normal()).string();
  }
  plan.cwd = cwd.empty() ? nullptr : cwd.c_str();
  plan.uts_fd = spec.uts_fd;
  plan.mnt_fd = spec.mnt_fd;
  plan.parent = ::getpid();
  plan.error_fd = write_fd;
  plan.default_action.sa_handler = SIG_DFL;
  sigemptyset(&plan.default_action.sa_mask);
  sigemptyset(&plan.empty_mask);

  sigset_t all, saved;
  sigfillset(&all);
  ::pthread_sigmask(SIG_BLOCK, &all, &saved);
  pid_t pid = ::fork();
  if (pid == 0) child_main(plan);
  int fork_err = errno;
  ::pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  ::close(write_fd);
  if (pid < 0) {
    ::close(read_fd);
    if (go_read >= 0) ::close(go_read);
    if (go_write >= 0) ::close(go_write);
    throw failure(fmt::format("fork: {}", errno_text(fork_err)));
  }
  // Also here, so that a signal() right after start() reaches the group even when the
  // child has not run yet. EACCES: it already exec'd (and set it itself).
  ::setpgid(pid, pid);
  if (go_read >= 0) {
    ::close(go_read);
    try {
      on_forked_(pid);
    } catch (...) {
      ::close(go_write);  // EOF: the child exits without running anything
      ::close(read_fd);
      int ignored;
      while (::waitpid(pid, &ignored, 0) < 0 && errno == EINTR) {
      }
      throw;
    }
    char go = 1;
    while (::write(go_write, &go, 1) < 0 && errno == EINTR) {
    }
    ::close(go_write);
  }

  ChildError error{};
  ssize_t n;
  do {
    n = ::read(read_fd, &error, sizeof(error));
  } while (n < 0 && errno == EINTR);
  ::close(read_fd);
  if (n == static_cast<ssize_t>(sizeof(error))) {
    int ignored;
    while (::waitpid(pid, &ignored, 0) < 0 && errno == EINTR) {
    }
    throw failure(stage_message(static_cast<Stage>(error.stage), spec, error.err));
  }

  processes_[pid] = ProcessStatus{pid, true, std::nullopt, std::nullopt};
  live_groups_.insert(pid);
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

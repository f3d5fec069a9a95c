#include "harness/process/process_child.h"

#include <cerrno>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <sched.h>
#include <stdexcept>
#include <string_view>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <system_error>
#include <unistd.h>

#if __has_include(<linux/close_range.h>)
#include <linux/close_range.h>
#endif

#include "common/process/program_path.h"
#include "common/files/safe_files.h"

extern char** environ;

namespace chaosbench::harness::child {
namespace {

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

}  // namespace

[[noreturn]] void child_main(const ChildPlan& p) {
  ::setpgid(0, 0);  // the parent does the same; whichever runs first wins the race
  if (::prctl(PR_SET_PDEATHSIG, p.death_signal) != 0) child_fail(p.error_fd, Stage::kDeathSignal, errno);
  // The harness may have died before prctl took effect; then nobody would kill us later.
  if (::getppid() != p.parent) ::_exit(127);
  // Dispositions first, while every signal is still blocked (the parent blocked them
  // around fork), so no harness handler can run in the child.
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::sigaction(sig, &p.default_action, nullptr);
  }
  ::sigprocmask(SIG_SETMASK, &p.empty_mask, nullptr);
  ::setpriority(PRIO_PROCESS, 0, p.nice);  // best effort: never inherit the harness's boost
  if (p.stdin_fd >= 0) {
    if (::dup2(p.stdin_fd, STDIN_FILENO) < 0) child_fail(p.error_fd, Stage::kStdin, errno);
  } else if (int err = redirect(nullptr, STDIN_FILENO)) {
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


namespace {

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

}  // namespace

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

void make_exec_image(const ProcessSpec& spec, ExecImage& image) {
  if (spec.argv.empty()) throw std::runtime_error(fmt::format("cannot start '{}': argv is empty", spec.name));
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
  image.path = common::resolve_program(program, path_it != env.end() ? path_it->second : "/bin:/usr/bin", spec.cwd,
                                       resolve_err);
  if (image.path.empty()) throw failure(errno_text(resolve_err));
  image.argv_storage.assign(spec.argv.begin(), spec.argv.end());
  for (auto& a : image.argv_storage) image.argv.push_back(a.data());
  image.argv.push_back(nullptr);
  image.env_storage.reserve(env.size());
  for (const auto& [k, v] : env) image.env_storage.push_back(k + "=" + v);
  for (auto& e : image.env_storage) image.envp.push_back(e.data());
  image.envp.push_back(nullptr);
  // In another mount namespace the process starts at its root: it goes to the harness's
  // directory, or the spec's resolved against it (the namespace is a copy of the harness's).
  image.cwd = spec.cwd;
  if (spec.mnt_fd >= 0 && (image.cwd.empty() || image.cwd.front() != '/')) {
    std::error_code ec;
    const auto here = std::filesystem::current_path(ec);
    if (!ec) image.cwd = (image.cwd.empty() ? here : (here / image.cwd).lexically_normal()).string();
  }
}

}  // namespace chaosbench::harness::child

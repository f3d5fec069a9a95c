#include "common/kernel/netns.h"

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <system_error>
#include <unistd.h>

#include "common/process/program_path.h"

namespace chaosbench::common {
namespace {

int open_thread_netns() {
  int fd = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "open /proc/thread-self/ns/net");
  return fd;
}

// Reads both pipes until they close or the deadline passes; false on timeout.
bool drain(int out_fd, int err_fd, std::string& out, std::string& err, std::chrono::steady_clock::time_point deadline) {
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  std::string* sinks[2] = {&out, &err};
  int open_count = 2;
  char buf[4096];
  while (open_count > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    int rc = ::poll(fds, 2, static_cast<int>(left.count()));
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) return rc == 0 ? false : true;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        fds[i].fd = -1;
        --open_count;
      }
    }
  }
  return true;
}

// What the child of run_in_netns execs, all made before fork.
struct ChildArgs {
  std::string program;  // resolved in PATH; "" when not found
  std::vector<std::string> env_strings;
  std::vector<char*> argv;
  std::vector<char*> envp;
};

ChildArgs prepare_child(const std::vector<std::string>& argv, const std::vector<std::string>* environment) {
  ChildArgs c;
  if (environment) {
    c.env_strings = *environment;
  } else {
    for (char** e = environ; *e != nullptr; ++e) c.env_strings.emplace_back(*e);
  }
  std::string path_var = "/bin:/usr/bin";
  for (const auto& e : c.env_strings)
    if (e.rfind("PATH=", 0) == 0) path_var = e.substr(5);
  int err = 0;
  c.program = common::resolve_program(argv[0], path_var, "", err);
  for (const auto& a : argv) c.argv.push_back(const_cast<char*>(a.c_str()));
  c.argv.push_back(nullptr);
  for (const auto& e : c.env_strings) c.envp.push_back(const_cast<char*>(e.c_str()));
  c.envp.push_back(nullptr);
  return c;
}

// The child: async-signal-safe calls only. Nothing outlives the harness.
[[noreturn]] void child_exec(const ChildArgs& c, int netns_fd, int out_fd, int err_fd) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig)
    if (sig != SIGKILL && sig != SIGSTOP) ::sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  if (netns_fd >= 0 && ::setns(netns_fd, CLONE_NEWNET) != 0) ::_exit(126);
  int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);  // dup2 leaves fd 0 open across exec
  if (devnull >= 0) ::dup2(devnull, 0);
  ::dup2(out_fd, 1);
  ::dup2(err_fd, 2);
  if (!c.program.empty()) ::execve(c.program.c_str(), c.argv.data(), c.envp.data());
  ::_exit(127);
}

}  // namespace

void enter_netns(int netns_fd) {
  if (::setns(netns_fd, CLONE_NEWNET) != 0)
    throw std::system_error(errno, std::generic_category(), "setns into a network namespace (needs CAP_SYS_ADMIN)");
}

int new_netns() {
  int back = open_thread_netns();
  if (::unshare(CLONE_NEWNET) != 0) {
    int err = errno;
    ::close(back);
    throw std::system_error(err, std::generic_category(), "cannot create a network namespace");
  }
  int fd = open_thread_netns();
  int rc = ::setns(back, CLONE_NEWNET);
  int err = errno;
  ::close(back);
  if (rc != 0) {
    ::close(fd);
    throw std::system_error(err, std::generic_category(), "setns back to the harness's namespace");
  }
  return fd;
}

void in_netns(int netns_fd, const std::function<void()>& fn) {
  int back = open_thread_netns();
  try {
    enter_netns(netns_fd);
    fn();
  } catch (...) {
    ::setns(back, CLONE_NEWNET);
    ::close(back);
    throw;
  }
  int rc = ::setns(back, CLONE_NEWNET);
  int err = errno;
  ::close(back);
  if (rc != 0) throw std::system_error(err, std::generic_category(), "setns back to the harness's namespace");
}

std::uint64_t netns_cookie(int netns_fd) {
  std::uint64_t cookie = 0;
  in_netns(netns_fd, [&] {
    int s = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0) return;
    socklen_t len = sizeof cookie;
    if (::getsockopt(s, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &len) != 0) cookie = 0;
    ::close(s);
  });
  return cookie;
}

CommandOutput run_in_netns(int netns_fd, const std::vector<std::string>& argv, std::chrono::milliseconds limit,
                           const std::vector<std::string>* environment) {
  CommandOutput result;
  if (argv.empty()) return result;
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "pipe");
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    throw std::system_error(errno, std::generic_category(), "pipe");
  }
  // Everything the child needs is made here: between fork and exec it may only make
  // async-signal-safe calls (execvp searches PATH with allocations; execve does not).
  const ChildArgs child = prepare_child(argv, environment);
  const auto deadline = std::chrono::steady_clock::now() + limit;
  // Signals stay blocked across fork, so no handler of this process ever runs in the
  // child (it could write to the harness's own pipes); the child resets them, then unblocks.
  sigset_t all, saved;
  sigfillset(&all);
  ::pthread_sigmask(SIG_BLOCK, &all, &saved);
  pid_t pid = ::fork();
  if (pid == 0) child_exec(child, netns_fd, out_pipe[1], err_pipe[1]);
  ::pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (pid < 0) {
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    throw std::system_error(errno, std::generic_category(), "fork");
  }
  bool finished = drain(out_pipe[0], err_pipe[0], result.out, result.err, deadline);
  ::close(out_pipe[0]);
  ::close(err_pipe[0]);
  if (!finished) {
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
    result.timed_out = true;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!result.timed_out && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  return result;
}

}  // namespace chaosbench::common

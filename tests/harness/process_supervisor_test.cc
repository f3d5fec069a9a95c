#include <catch2/catch.hpp>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <pthread.h>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "test_util.h"
#include "harness/process/process_supervisor.h"

namespace process_supervisor_test {  // this file's names, apart in a unity batch (tests/CMakeLists.txt)

using chaosbench::harness::ProcessSpec;
using chaosbench::harness::ProcessSupervisor;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

// test_util's TempDir (removed even when a test fails), seen as a std::filesystem path.
struct TempDir : chaosbench::test::TempDir {
  fs::path path{chaosbench::test::TempDir::path()};
};

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

ProcessSpec spec_in(const TempDir& dir, const std::string& name, std::vector<std::string> argv) {
  ProcessSpec s;
  s.name = name;
  s.argv = std::move(argv);
  s.stdout_path = (dir.path / (name + ".out")).string();
  s.stderr_path = (dir.path / (name + ".err")).string();
  return s;
}

// Waits (via wait_any) until `pid` has exited; false on timeout.
bool wait_exit(ProcessSupervisor& sup, pid_t pid, std::chrono::milliseconds timeout = 5s) {
  auto deadline = Clock::now() + timeout;
  while (sup.status(pid).running && Clock::now() < deadline) sup.wait_any(100ms);
  return !sup.status(pid).running;
}

// The pid a shell wrote to `file`, once the line is complete.
pid_t wait_pid_file(const fs::path& file) {
  auto deadline = Clock::now() + 5s;
  while (Clock::now() < deadline) {
    std::string text = read_file(file);
    if (!text.empty() && text.back() == '\n') return static_cast<pid_t>(std::stol(text));
    std::this_thread::sleep_for(5ms);
  }
  return -1;
}

bool gone(pid_t pid) { return ::kill(pid, 0) == -1 && errno == ESRCH; }

}  // namespace

TEST_CASE("supervisor: exit codes and killing signals are reported", "[supervisor]") {
  TempDir dir;
  ProcessSupervisor sup;
  pid_t ok = sup.start(spec_in(dir, "ok", {"sh", "-c", "exit 0"}));
  pid_t three = sup.start(spec_in(dir, "three", {"sh", "-c", "exit 3"}));
  pid_t self_killed = sup.start(spec_in(dir, "self-killed", {"sh", "-c", "kill -KILL $$"}));
  pid_t sleeper = sup.start(spec_in(dir, "sleeper", {"sleep", "30"}));
  CHECK(::getpgid(sleeper) == sleeper);  // its own group, so signal() reaches its children
  CHECK(sup.status(sleeper).running);
  sup.signal(sleeper, SIGTERM);

  for (pid_t p : {ok, three, self_killed, sleeper}) REQUIRE(wait_exit(sup, p));
  CHECK(sup.status(ok).exit_code == 0);
  CHECK(sup.status(three).exit_code == 3);
  CHECK_FALSE(sup.status(three).signal);
  CHECK(sup.status(self_killed).signal == SIGKILL);
  CHECK_FALSE(sup.status(self_killed).exit_code);
  CHECK(sup.status(sleeper).signal == SIGTERM);
  CHECK_FALSE(sup.any_running());
  CHECK(sup.pids().size() == 4);
  sup.signal(sleeper, SIGKILL);  // exited: a no-op
  CHECK(sup.poll().empty());
  CHECK_THROWS_AS(sup.status(1), std::out_of_range);
}

TEST_CASE("supervisor: logs, environment, working directory and PATH of the final environment",
          "[supervisor]") {
  TempDir dir;
  fs::create_directory(dir.path / "work");
  fs::create_directory(dir.path / "bin");
  {
    std::ofstream script(dir.path / "bin" / "chaosbench-test-hello");
    script << "#!/bin/sh\necho \"hello from $0\"\n";
  }
  fs::permissions(dir.path / "bin" / "chaosbench-test-hello", fs::perms::owner_all);

  ProcessSupervisor sup;
  auto s = spec_in(dir, "rank0", {"sh", "-c", "echo out-$CB_TEST_VAR; echo err-line >&2; pwd -P"});
  s.env = {{"CB_TEST_VAR", "hello"}};
  s.cwd = (dir.path / "work").string();
  pid_t pid = sup.start(s);

  // Found only through the PATH given in the spec, not the harness's own.
  auto h = spec_in(dir, "hello", {"chaosbench-test-hello"});
  h.env = {{"PATH", (dir.path / "bin").string() + ":/usr/bin:/bin"}};
  pid_t hello = sup.start(h);

  // One file for both streams, as `2>&1`.
  auto both = spec_in(dir, "both", {"sh", "-c", "echo one; echo two >&2; echo three"});
  both.stderr_path = both.stdout_path;
  pid_t shared = sup.start(both);

  for (pid_t p : {pid, hello, shared}) REQUIRE(wait_exit(sup, p));
  CHECK(sup.status(pid).exit_code == 0);
  CHECK(read_file(s.stdout_path) ==
        "out-hello\n" + fs::canonical(dir.path / "work").string() + "\n");
  CHECK(read_file(s.stderr_path) == "err-line\n");
  CHECK(sup.status(hello).exit_code == 0);
  CHECK_THAT(read_file(h.stdout_path), Catch::Contains("hello from"));
  CHECK(read_file(both.stdout_path) == "one\ntwo\nthree\n");
}

TEST_CASE("supervisor: start failures throw with the program and the reason", "[supervisor]") {
  TempDir dir;
  ProcessSupervisor sup;
  // Resolved against PATH in the harness.
  CHECK_THROWS_WITH(sup.start(spec_in(dir, "x", {"chaosbench-no-such-program"})),
                    "cannot start 'chaosbench-no-such-program': No such file or directory");
  // Reported by the child through the close-on-exec pipe.
  CHECK_THROWS_WITH(sup.start(spec_in(dir, "y", {"/nonexistent/chaosbench-prog"})),
                    "cannot start '/nonexistent/chaosbench-prog': No such file or directory");
  {
    std::ofstream(dir.path / "not-executable") << "#!/bin/sh\n";
  }
  std::string not_exec = (dir.path / "not-executable").string();
  // No x bit at all: even root gets EACCES from execve.
  CHECK_THROWS_WITH(sup.start(spec_in(dir, "z", {not_exec})),
                    "cannot start '" + not_exec + "': Permission denied");
  auto bad_log = spec_in(dir, "w", {"true"});
  bad_log.stdout_path = (dir.path / "missing-dir" / "w.out").string();
  CHECK_THROWS_WITH(sup.start(bad_log), Catch::Contains("cannot start 'true'") &&
                                            Catch::Contains("stdout file") &&
                                            Catch::Contains("No such file or directory"));
  auto bad_cwd = spec_in(dir, "v", {"true"});
  bad_cwd.cwd = (dir.path / "missing-dir").string();
  CHECK_THROWS_WITH(sup.start(bad_cwd), Catch::Contains("cannot change directory"));
  CHECK_THROWS_WITH(sup.start(spec_in(dir, "u", {})), Catch::Contains("argv is empty"));
  CHECK(sup.pids().empty());
  // The failed children were reaped, not left as zombies.
  CHECK(::waitpid(-1, nullptr, WNOHANG) <= 0);
}

TEST_CASE("supervisor: children start with default signals, /dev/null stdin, no leaked fds",
          "[supervisor]") {
  TempDir dir;
  // The harness ignores SIGUSR1, blocks SIGUSR2 and holds an inheritable descriptor;
  // none of that may reach a workload.
  struct sigaction ignore {}, saved_action {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGUSR1, &ignore, &saved_action);
  sigset_t usr2, saved_mask;
  sigemptyset(&usr2);
  sigaddset(&usr2, SIGUSR2);
  ::pthread_sigmask(SIG_BLOCK, &usr2, &saved_mask);
  int leak = ::open("/dev/null", O_RDONLY);  // no O_CLOEXEC on purpose
  int high = ::fcntl(leak, F_DUPFD, 100);
  struct Restore {
    sigset_t mask;
    struct sigaction action;
    int fds[2];
    ~Restore() {
      ::pthread_sigmask(SIG_SETMASK, &mask, nullptr);
      ::sigaction(SIGUSR1, &action, nullptr);
      for (int fd : fds) ::close(fd);
    }
  } restore{saved_mask, saved_action, {leak, high}};
  REQUIRE(high >= 100);

  ProcessSupervisor sup;
  pid_t status = sup.start(spec_in(dir, "status", {"cat", "/proc/self/status"}));
  pid_t stdin_link = sup.start(spec_in(dir, "stdin", {"readlink", "/proc/self/fd/0"}));
  pid_t leaked = sup.start(
      spec_in(dir, "leaked", {"readlink", "/proc/self/fd/" + std::to_string(high)}));
  for (pid_t p : {status, stdin_link, leaked}) REQUIRE(wait_exit(sup, p));

  std::string text = read_file(dir.path / "status.out");
  CHECK_THAT(text, Catch::Contains("SigBlk:\t0000000000000000"));
  CHECK_THAT(text, Catch::Contains("SigIgn:\t0000000000000000"));
  CHECK(read_file(dir.path / "stdin.out") == "/dev/null\n");
  CHECK(sup.status(leaked).exit_code != 0);  // fd 100 does not exist in the child
}

TEST_CASE("supervisor: stop_all kills a process that ignores SIGTERM, and its background child",
          "[supervisor]") {
  TempDir dir;
  ProcessSupervisor sup;
  fs::path pid_file = dir.path / "grandchild.pid";
  // The background sleep inherits the ignored SIGTERM, so only SIGKILL ends either.
  pid_t sh = sup.start(spec_in(
      dir, "stubborn",
      {"sh", "-c", "trap '' TERM; sleep 100 & echo $! > \"$1\"; wait", "sh", pid_file.string()}));
  pid_t grandchild = wait_pid_file(pid_file);
  REQUIRE(grandchild > 0);
  REQUIRE(::kill(grandchild, 0) == 0);

  auto t0 = Clock::now();
  sup.stop_all(500ms);
  auto elapsed = Clock::now() - t0;
  CHECK(elapsed >= 450ms);  // it waited out the grace: SIGTERM was ignored
  CHECK(elapsed < 1500ms);
  CHECK(sup.status(sh).signal == SIGKILL);
  CHECK_FALSE(sup.any_running());
  CHECK(gone(sh));
  CHECK(gone(grandchild));  // killed and reaped, not a zombie

  t0 = Clock::now();
  sup.stop_all(500ms);  // idempotent, and quick when nothing is left
  CHECK(Clock::now() - t0 < 200ms);
}

TEST_CASE("supervisor: orphaned grandchildren are reparented to the harness and reaped",
          "[supervisor]") {
  TempDir dir;
  ProcessSupervisor sup;
  fs::path pid_file = dir.path / "orphan.pid";
  pid_t sh = sup.start(
      spec_in(dir, "parent", {"sh", "-c", "sleep 100 & echo $! > \"$1\"", "sh", pid_file.string()}));
  REQUIRE(wait_exit(sup, sh));
  CHECK(sup.status(sh).exit_code == 0);
  pid_t orphan = wait_pid_file(pid_file);
  REQUIRE(orphan > 0);
  REQUIRE(::kill(orphan, 0) == 0);
  // Its parent exited, so the subreaper (this process) adopted it.
  std::string stat = read_file("/proc/" + std::to_string(orphan) + "/stat");
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string state;
  pid_t ppid = 0;
  fields >> state >> ppid;
  CHECK(ppid == ::getpid());

  auto t0 = Clock::now();
  sup.stop_all(2000ms);
  CHECK(Clock::now() - t0 < 1000ms);  // sleep dies on SIGTERM; no need to wait the grace
  CHECK(gone(orphan));
}

TEST_CASE("supervisor: stop_all lets a stopped process act on SIGTERM", "[supervisor]") {
  TempDir dir;
  ProcessSupervisor sup;
  // A TERM handler (a graceful shutdown) only runs once the process runs again; a stopped
  // process without one would die of SIGTERM anyway. The loop forks nothing, so no late
  // child can keep the group alive; it spins only until SIGSTOP, a few milliseconds.
  auto spec =
      spec_in(dir, "paused", {"sh", "-c", "trap 'exit 0' TERM; echo ready; while :; do :; done"});
  pid_t paused = sup.start(spec);
  auto ready_by = Clock::now() + 2s;
  while (read_file(spec.stdout_path) != "ready\n" && Clock::now() < ready_by) {
    std::this_thread::sleep_for(1ms);
  }
  REQUIRE(read_file(spec.stdout_path) == "ready\n");  // the trap is in place
  sup.signal(paused, SIGSTOP);                          // as a node.pause fault would
  auto state = [&] {
    std::string stat = read_file("/proc/" + std::to_string(paused) + "/stat");
    auto close = stat.rfind(')');
    return close == std::string::npos ? '?' : stat[close + 2];
  };
  auto deadline = Clock::now() + 2s;
  while (state() != 'T' && Clock::now() < deadline) std::this_thread::sleep_for(1ms);
  REQUIRE(state() == 'T');
  auto t0 = Clock::now();
  sup.stop_all(3000ms);
  CHECK(Clock::now() - t0 < 1500ms);  // SIGCONT let its handler run, long before the grace
  CHECK(sup.status(paused).exit_code == 0);
}

TEST_CASE("supervisor: wait_any returns promptly when a process exits", "[supervisor]") {
  TempDir dir;
  ProcessSupervisor sup;
  pid_t slow = sup.start(spec_in(dir, "slow", {"sleep", "30"}));
  pid_t quick = sup.start(spec_in(dir, "quick", {"sleep", "0.2"}));

  auto t0 = Clock::now();
  auto changed = sup.wait_any(5000ms);
  auto elapsed = Clock::now() - t0;
  REQUIRE(changed == std::vector<pid_t>{quick});
  CHECK(elapsed < 1500ms);
  CHECK(sup.status(quick).exit_code == 0);

  t0 = Clock::now();
  changed = sup.wait_any(100ms);
  elapsed = Clock::now() - t0;
  CHECK(changed.empty());
  CHECK(elapsed >= 90ms);
  CHECK(elapsed < 1000ms);

  sup.stop_all(1000ms);
  CHECK(sup.status(slow).signal == SIGTERM);
  t0 = Clock::now();
  CHECK(sup.wait_any(1000ms).empty());  // nothing runs: returns at once
  CHECK(Clock::now() - t0 < 100ms);
}

TEST_CASE("supervisor: poll leaves other children of the harness alone", "[supervisor]") {
  TempDir dir;
  ProcessSupervisor sup;
  pid_t foreign = ::fork();
  if (foreign == 0) ::_exit(7);
  REQUIRE(foreign > 0);
  pid_t ours = sup.start(spec_in(dir, "ours", {"sh", "-c", "sleep 0.1"}));
  REQUIRE(wait_exit(sup, ours));
  sup.poll();
  int ws = 0;
  REQUIRE(::waitpid(foreign, &ws, 0) == foreign);  // its status is still there for its owner
  CHECK(WIFEXITED(ws));
  CHECK(WEXITSTATUS(ws) == 7);
}

}  // namespace process_supervisor_test

// Starts the workload's processes and watches them: exit codes, signals, log capture,
// and the guarantee that none outlives the harness. Owns only the processes it started;
// never finds or kills anything by name.
//
// Threads: every method is called from the runner's thread, except that nothing here
// is thread-safe; the runner serialises access.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace chaosbench::harness {

struct ProcessSpec {
  std::string name;                 // "rank0": used in logs and log file names
  std::vector<std::string> argv;    // argv[0] is looked up in PATH when it has no '/'
  std::map<std::string, std::string> env;  // added to (and overriding) the harness's environment
  std::string cwd;                  // empty: the harness's working directory
  std::string stdout_path;          // file the process's stdout goes to (created/truncated)
  std::string stderr_path;          // file the process's stderr goes to
};

struct ProcessStatus {
  pid_t pid = -1;
  bool running = true;
  std::optional<int> exit_code;  // set when it exited normally
  std::optional<int> signal;     // set when a signal killed it
};

class ProcessSupervisor {
 public:
  ProcessSupervisor();
  ~ProcessSupervisor();  // stop_all(): kills and reaps whatever still runs
  ProcessSupervisor(const ProcessSupervisor&) = delete;
  ProcessSupervisor& operator=(const ProcessSupervisor&) = delete;

  // Forks and execs. The child gets its own process group, PR_SET_PDEATHSIG(SIGKILL)
  // (so it dies if the harness dies), stdin from /dev/null, stdout/stderr to the spec's
  // files, and the default signal mask and dispositions. Returns the pid; throws
  // std::runtime_error when the program cannot be started (exec failure is reported
  // through a close-on-exec pipe, so "no such file" is an error here, not a silent
  // exit 127).
  pid_t start(const ProcessSpec& spec);

  // Reaps whatever exited (non-blocking) and returns the pids that changed state.
  std::vector<pid_t> poll();

  // Waits up to `timeout` for some child to exit, then behaves like poll().
  std::vector<pid_t> wait_any(std::chrono::milliseconds timeout);

  const ProcessStatus& status(pid_t pid) const;
  bool any_running() const;
  std::vector<pid_t> pids() const;

  // Sends `sig` to the process group of one process (its children too). No-op when it
  // already exited.
  void signal(pid_t pid, int sig);

  // SIGTERM to every running group, waits up to `grace`, then SIGKILL, then reaps all.
  // Idempotent. Also reaps orphaned grandchildren (the harness is a child subreaper).
  void stop_all(std::chrono::milliseconds grace = std::chrono::milliseconds(2000));

 private:
  std::map<pid_t, ProcessStatus> processes_;
};

}  // namespace chaosbench::harness

// Starts the workload's processes and watches them: exit codes, signals, log capture,
// and the guarantee that none outlives the harness. Owns only the processes it started;
// never finds or kills anything by name.
//
// Threads: not thread-safe; its owner (the run's thread, or an agent's loop) calls every
// method from one thread. PR_SET_PDEATHSIG fires when the *thread* that forked exits, so
// that thread must outlive the processes it starts.
#pragma once

#include <chrono>
#include <csignal>
#include <functional>
#include <cstddef>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <sys/types.h>
#include <utility>
#include <vector>

namespace chaosbench::harness {

struct ProcessSpec {
  std::string name;                 // "rank0": used in logs and log file names
  std::vector<std::string> argv;    // argv[0] is looked up in PATH when it has no '/'
  std::map<std::string, std::string> env;  // added to (and overriding) the harness's environment
  std::string cwd;                  // empty: the harness's working directory
  std::string stdout_path;          // file the process's stdout goes to, created fresh (an
                                    // entry there is replaced, mode 0640); empty: /dev/null
  std::string stderr_path;          // file the process's stderr goes to; the same path as
                                    // stdout_path shares one file (and one offset)
  int netns_fd = -1;                // network namespace to run in (setns before exec); -1: the harness's
  int uts_fd = -1;                  // UTS namespace (hostname) to run in; -1: the harness's
  int mnt_fd = -1;                  // mount namespace to run in; -1: the harness's. Log files are
                                    // opened before entering it; cwd (or the harness's) after
  int stdin_fd = -1;                // the child's standard input (a pipe's read end, say, which the
                                    // caller closes after start); -1: /dev/null
  int death_signal = SIGKILL;       // sent to it when the harness dies (PR_SET_PDEATHSIG); a
                                    // process that cleans up after itself (an agent) takes SIGTERM;
                                    // 0: none, it outlives the harness (see agent_launcher.cc)
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

  // Forks and execs. The child gets its own process group, PR_SET_PDEATHSIG(spec.death_signal)
  // (so it dies if the harness dies), stdin from spec.stdin_fd or /dev/null, stdout/stderr to the spec's
  // files, and the default signal mask and dispositions. Returns the pid; throws
  // std::runtime_error when the program cannot be started (exec failure is reported
  // through a close-on-exec pipe, so "no such file" is an error here, not a silent
  // exit 127).
  pid_t start(const ProcessSpec& spec);

  // Reaps whatever exited (non-blocking) and returns the pids that changed state. Waits
  // only for the started processes and their process groups (orphaned grandchildren in
  // them), never for other children of the harness, so their owners still get their status.
  std::vector<pid_t> poll();

  // Waits up to `timeout` for some child to exit, then behaves like poll(). Returns at
  // once when nothing runs, and early when a signal interrupts the wait (so SIGINT is
  // handled at once). Sleeps in poll(2) on pidfds, not in a busy loop.
  std::vector<pid_t> wait_any(std::chrono::milliseconds timeout);

  // Throws std::out_of_range for a pid this supervisor did not start.
  const ProcessStatus& status(pid_t pid) const;
  bool any_running() const;
  std::vector<pid_t> pids() const;

  // Sends `sig` to the process group of one process (its children too). No-op when it
  // already exited.
  void signal(pid_t pid, int sig);

  // SIGTERM (and SIGCONT, for stopped ones) to every running group, waits up to `grace`
  // for the groups to empty, then SIGKILL, then reaps all.
  // Idempotent. Also reaps orphaned grandchildren (the harness is a child subreaper).
  // The final sweep is waitpid(-1): exit statuses of children the harness forked elsewhere
  // and that are already dead are consumed there (recorded privately), so call this when
  // no other component still waits for its own children.
  void stop_all(std::chrono::milliseconds grace = std::chrono::milliseconds(2000));

  // When on, stop_all() also kills every child of this process it did not start itself.
  // With the harness as child subreaper those are orphaned workload descendants that left
  // their process group (a daemon that called setsid). Only for a process that forks
  // nothing else, as the chaosbench binary during `run`; off by default.
  void set_kill_adopted_orphans(bool on) { kill_adopted_orphans_ = on; }

  // Called in the parent after fork and before the child may exec, with the child's pid:
  // what the hook records (the run's journal) exists before the program runs, so a crash
  // of the harness can never leave an unrecorded process. If the hook throws, the child
  // exits without running anything and start() rethrows.
  void set_on_forked(std::function<void(pid_t)> hook) { on_forked_ = std::move(hook); }

 private:
  void reap(std::vector<pid_t>* changed);
  void record_exit(pid_t pid, int wait_status, std::vector<pid_t>* changed);
  void signal_groups(int sig);
  void sweep_children();
  void kill_adopted_orphans();

  std::map<pid_t, ProcessStatus> processes_;
  std::map<pid_t, int> pidfds_;  // running started processes; readable once one exits
  // Process groups (ids = the started pids) that may still hold something of ours: the
  // leader is unreaped or a child of ours is in the group. Only these are ever signalled,
  // so a group id whose number was recycled by the system is never hit.
  std::set<pid_t> live_groups_;
  // Exits of pids not started here (orphans, other components' children): recorded so
  // nothing is lost silently, bounded so a long run cannot grow it without limit.
  std::deque<std::pair<pid_t, int>> other_exits_;
  bool kill_adopted_orphans_ = false;
  std::function<void(pid_t)> on_forked_;
  // The nice value the harness had when this supervisor was made; children get it even
  // when the harness later raises its own priority for timing precision.
  int child_nice_ = 0;
};

}  // namespace chaosbench::harness

// The child side of ProcessSupervisor::start: the plan a forked child carries out before
// exec (async-signal-safe calls only: the parent has threads), the error it reports back
// through a close-on-exec pipe, and the exec image prepared before fork. Internal to
// harness/process.
#pragma once

#include <csignal>
#include <map>
#include <string>
#include <sys/types.h>
#include <vector>

#include "common/values/errno_text.h"
#include "harness/process/process_supervisor.h"

namespace chaosbench::harness::child {

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
  int stdin_fd;  // -1 (/dev/null), or what becomes the child's standard input
  int death_signal;  // PR_SET_PDEATHSIG: what the child gets when the harness dies
  struct sigaction default_action;
  sigset_t empty_mask;
};

// The program, its arguments and its whole environment as execve takes them, with the
// storage they point into. Move-only in effect: the pointers aim into this object.
struct ExecImage {
  std::string path;  // argv[0] resolved in the child's PATH
  std::vector<std::string> argv_storage, env_storage;
  std::vector<char*> argv, envp;
  std::string cwd;  // where the child goes (see make_exec_image); "" to stay
};

// Builds the image for `spec`: the harness's environment with the spec's variables, the
// program found in the PATH the child will have, the working directory resolved for a
// mount namespace. Throws std::runtime_error ("cannot start 'x': ...").
void make_exec_image(const ProcessSpec& spec, ExecImage& image);

// Carries out `p` in the forked child and execs; never returns.
[[noreturn]] void child_main(const ChildPlan& p);

// The parent's message for a child that failed at `stage`.
std::string stage_message(Stage stage, const ProcessSpec& spec, int err);

using common::errno_text;

}  // namespace chaosbench::harness::child

// A real `chaosbench worker serve` process for tests that must survive its crash or watch
// its resources: started with a small model on an ephemeral port (read from its log),
// optionally under a lower RLIMIT_NOFILE; SIGTERM then SIGKILL on destruction.
// Threads: one owner thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "test_util.h"

namespace chaosbench::test {

class ServeProcess {
 public:
  // Blocks until the server prints its port (throws std::runtime_error after 30 s or when
  // it exits first). nofile > 0: the child's RLIMIT_NOFILE (soft and hard).
  explicit ServeProcess(const std::vector<std::string>& extra_args = {}, long nofile = 0);
  ~ServeProcess();
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;

  unsigned short port() const { return port_; }
  pid_t pid() const { return pid_; }
  bool alive();                    // false once it exited (then exit_signal() says how)
  int exit_signal() const { return signal_; }  // the killing signal, 0 if none
  long rss_kb() const;             // VmRSS from /proc/<pid>/status
  double cpu_seconds() const;      // utime + stime from /proc/<pid>/stat
  std::string log() const;         // its stdout and stderr so far

 private:
  TempDir dir_;
  pid_t pid_ = -1;
  unsigned short port_ = 0;
  int signal_ = 0;
};

}  // namespace chaosbench::test

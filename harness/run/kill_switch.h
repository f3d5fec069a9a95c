// The kill switch: a file named `stop` in the run's output directory. Whoever creates it
// (`chaosbench stop`, a person, another tool) stops the run as a stop condition would:
// every fault reverted, the workload stopped, verdict aborted, exit 4. What the file says
// (its first line) is recorded as who pulled it.
// A file left there by an earlier run in the same directory (older than this run) is
// removed when the switch is made, so it never stops a run it was not meant for; one
// pulled during set-up is kept and honoured.
// Threads: pulled() and reason() from any one thread.
#pragma once

#include <string>

namespace chaosbench::harness {

class KillSwitch {
 public:
  // Removes a stale switch file in `out_dir`: one last modified before `run_began_wall`
  // (Unix seconds).
  KillSwitch(std::string out_dir, double run_began_wall);

  static std::string path_in(const std::string& out_dir);  // "<out_dir>/stop"

  // One stat(2): whether the file exists now.
  bool pulled() const;
  // The file's first line (at most 200 bytes, printable), or "the stop file" when empty
  // or not a regular file (a link, a FIFO: never opened).
  std::string reason() const;
  // Removes the file (after the run honoured it). Idempotent.
  void reset() const;

 private:
  std::string path_;
};

}  // namespace chaosbench::harness

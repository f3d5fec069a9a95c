// A command probe: run a program (no shell) in a node's network namespace, or this
// process's, and pass when it exits 0 in time ("curl -sf http://{node.0.addr}:8000/",
// "nvidia-smi -q"). On this machine only: the agent modes do not run probes yet.
#pragma once

#include "harness/probes/probe_check.h"

namespace chaosbench::harness::probes {

class CommandProbe : public ProbeCheck {
 public:
  CommandProbe(ProbeSpec spec, ProbeContext ctx);

  // Blocks until the program exits or the timeout, when it is killed (its process group
  // too) and the probe fails. Evidence: the exit code and the last line of its stderr.
  ProbeOutcome evaluate(double now_wall) override;

 private:
  ProbeSpec spec_;
  ProbeContext ctx_;
};

// The last non-empty line of `text`, at most 200 characters, control characters as '?'.
std::string last_line(const std::string& text);

}  // namespace chaosbench::harness::probes

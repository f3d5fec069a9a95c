// Exit codes, one table for every command (../shared/ARCHITECTURE.md).
#pragma once

namespace chaosbench::harness {

enum ExitCode : int {
  kExitPass = 0,         // everything passed
  kExitCheckFailed = 1,  // a check or gate failed (or the workload failed)
  kExitUsage = 2,        // usage or scenario error
  kExitHost = 3,         // the host cannot do what was asked (capability, permission)
  kExitInterrupted = 130,
};

}  // namespace chaosbench::harness

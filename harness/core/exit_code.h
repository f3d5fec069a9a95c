// Exit codes, one table for every command (README.md "Exit codes"), and the one mapping
// from an outcome to its code. No command picks a code for a verdict by itself.
#pragma once

#include "reports/model/verdict.h"

namespace chaosbench::harness {

enum ExitCode : int {
  kExitPass = 0,         // everything passed
  kExitCheckFailed = 1,  // a check or gate failed (or the workload failed)
  kExitUsage = 2,        // usage or scenario error
  kExitHost = 3,         // the host cannot do what was asked (capability, permission)
  kExitAborted = 4,      // a stop condition (abort) or the kill switch (chaosbench stop) stopped the run
  kExitInterrupted = 130,
};

// Where a verdict comes from, which is what the code needs besides the verdict.
enum class VerdictSource {
  kThisRun,    // this process judged it (run, bench, compare --gate, report --baseline)
  kHostLimit,  // this process judged it, and it stopped because the host could not do
               // what was asked (HostError; a report that could not be written)
  kStored,     // read back from a results.json (report): this process was neither
               // interrupted nor refused anything, it only repeats a stored judgement
};

// The mapping, as README.md documents it:
//   kPass                                  -> 0
//   kAborted (also when kStored)           -> 4
//   kFail  (workload, check, gate)         -> 1
//   kError (a fault could not be applied or reverted, cleanup failed, or any unexpected
//           exception: not a usage error)  -> 1
//   any verdict but kPass, kHostLimit      -> 3
//   kInterrupted                           -> 130, but 1 when kStored
// Usage and scenario errors (2) come before there is a verdict: cli_main maps
// UsageError and ScenarioError to kExitUsage itself.
ExitCode exit_code_for(reports::Verdict verdict, VerdictSource source = VerdictSource::kThisRun);

}  // namespace chaosbench::harness

// A run's verdict as a type: what results.json's "verdict" says, and what the exit code
// (harness/core/exit_code.h) and every reporter are derived from. How the verdict forms
// from failures, checks, the gate and an interruption is judgement.h's fold.
#pragma once

#include <string_view>

namespace chaosbench::reports {

enum class Verdict {
  kPass,         // "pass": nothing failed, every check passed
  kFail,         // "fail": the workload, a check or the baseline gate failed
  kError,        // "error": the harness itself could not do its part (a fault, cleanup)
  kInterrupted,  // "interrupted": a signal stopped the run
  kAborted,      // "aborted": a stop condition or the kill switch stopped the run (exit 4)
};

// The word results.json holds.
constexpr std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::kPass: return "pass";
    case Verdict::kFail: return "fail";
    case Verdict::kError: return "error";
    case Verdict::kInterrupted: return "interrupted";
    case Verdict::kAborted: return "aborted";
  }
  return "error";
}

// The inverse of to_string. A missing or unknown word (a hand-edited results.json) reads
// as kError, which every reporter has always shown it as ("ERROR").
constexpr Verdict parse_verdict(std::string_view word) {
  for (Verdict v : {Verdict::kPass, Verdict::kFail, Verdict::kInterrupted, Verdict::kAborted})
    if (to_string(v) == word) return v;
  return Verdict::kError;
}

}  // namespace chaosbench::reports

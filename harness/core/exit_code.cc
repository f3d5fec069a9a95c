#include "harness/core/exit_code.h"

namespace chaosbench::harness {

ExitCode exit_code_for(reports::Verdict verdict, VerdictSource source) {
  using reports::Verdict;
  if (verdict == Verdict::kPass) return kExitPass;
  if (verdict == Verdict::kAborted) return kExitAborted;
  if (verdict == Verdict::kInterrupted && source != VerdictSource::kStored) return kExitInterrupted;
  if (source == VerdictSource::kHostLimit) return kExitHost;
  return kExitCheckFailed;
}

}  // namespace chaosbench::harness

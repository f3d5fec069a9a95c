// The one refusal of numbers from other hardware, for every command that compares runs
// (compare, run --baseline, report --baseline, history add and history gate): the
// differences environment_differences (reports/gate/environment_diff.h) finds, one per line,
// as a UsageError (exit 2), or with --allow-env-diff as a warning on stderr.
#pragma once

#include <string>

#include "reports/model/run_model.h"

namespace chaosbench::harness {

// Throws UsageError("<subject>: measured on another testbed or hardware, so its numbers
// are no baseline for these:\n  <difference>...\n(--allow-env-diff compares them anyway)")
// when the fingerprints differ, unless `allow`, which prints
// "chaosbench: warning: <warning_subject> was measured on another testbed or hardware:"
// and the differences instead. Nothing when they do not differ.
void check_same_environment(const reports::Environment& baseline, const reports::Environment& current,
                            const std::string& subject, const std::string& warning_subject, bool allow);

}  // namespace chaosbench::harness

#include "harness/cli/environment_check.h"

#include <fmt/format.h>
#include <iostream>

#include "harness/cli/commands.h"
#include "reports/gate/environment_diff.h"

namespace chaosbench::harness {

void check_same_environment(const reports::Environment& baseline, const reports::Environment& current,
                            const std::string& subject, const std::string& warning_subject, bool allow) {
  const auto diffs = reports::environment_differences(baseline, current);
  if (diffs.empty()) return;
  std::string list;
  for (const auto& d : diffs) list += "\n  " + d;
  if (!allow)
    throw UsageError(fmt::format("{}: measured on another testbed or hardware, so its numbers are no baseline for "
                                 "these:{}\n(--allow-env-diff compares them anyway)",
                                 subject, list));
  std::cerr << "chaosbench: warning: " << warning_subject << " was measured on another testbed or hardware:" << list
            << "\n";
}

}  // namespace chaosbench::harness

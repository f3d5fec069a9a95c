// junit.xml for CI test views: one <testsuite> per scenario, one <testcase> per check
// (and per gated metric when run.comparison is set), a <failure> carrying the values
// for each failed one, <skipped> for a WARN; names unique within the suite (GitLab keeps
// only the first of duplicate names). Pure.
#pragma once

#include <string>

#include "reports/model/run_model.h"

namespace chaosbench::reports {

std::string render_junit(const RunResult& run);

}  // namespace chaosbench::reports

// summary.md, GitHub-flavoured Markdown for $GITHUB_STEP_SUMMARY (kept well under its
// 1 MiB limit): verdict, failed checks, key metrics per phase with deltas against the
// baseline when run.comparison is set, and the top tuning advice. Also the `::error::`
// workflow-command lines `run --annotations` prints for failed checks (GitHub shows at
// most 10 per step: the first 10, then one line saying how many more).
// Pure: the run model in, text out.
#pragma once

#include <string>
#include <vector>

#include "reports/model/run_model.h"

namespace chaosbench::reports {

std::string render_markdown(const RunResult& run);
// `scenario_file` names the file the annotations point at ("::error file=...::").
std::vector<std::string> github_annotations(const RunResult& run, const std::string& scenario_file);

}  // namespace chaosbench::reports

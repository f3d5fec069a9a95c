// What `run` and `report` share after a run model exists: the baseline comparison
// (--baseline) folded into the verdict, the report files (--report), the console summary
// and GitHub annotations (--annotations).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/cli/cli_options.h"
#include "harness/core/exit_code.h"
#include "reports/render/report_set.h"
#include "reports/model/run_model.h"

namespace chaosbench::harness {

struct ReportOptions {
  std::vector<reports::ReportRequest> requests;  // empty: every file format
  std::optional<reports::RunResult> baseline;
  std::string scenario_file;  // for annotations
  bool annotations = false;
  bool quiet = false;
  bool allow_env_diff = false;  // compare with a baseline from another testbed or hardware
};

// Adds --report, --baseline and --annotations to `options`.
void add_report_options(po::options_description& options);
// Reads them (the baseline file is loaded now, so a bad one fails before any work: a
// UsageError naming the file).
ReportOptions read_report_options(const po::variables_map& vm);
// With a baseline: a UsageError (exit 2) listing what differs when it was measured on
// another testbed or hardware than `current` (reports/gate/environment_diff.h), unless
// --allow-env-diff, which prints the differences as a warning instead.
void check_baseline_environment(const ReportOptions& options, const reports::Environment& current);

// Compares with the baseline (when given): a failed gate turns a passing verdict into
// "fail" with the regressions as the reason (reports/model/judgement.h). Then writes the
// reports into `dir` and prints the console summary (unless quiet, or console was asked
// for explicitly) and the annotations. Returns the result's exit code, computed here once
// from its final verdict and `source` (harness/core/exit_code.h); a passing result whose
// reports could not be written exits as a host limit (3).
int finish_reports(reports::RunResult& result, const std::string& dir, const ReportOptions& options,
                   VerdictSource source);

}  // namespace chaosbench::harness

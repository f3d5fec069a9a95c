// run, for a scenario that declares a sweep: every point of the grid as a run of its own
// (OUT/point-NN/, with all its reports), then OUT/sweep.md and OUT/sweep.json comparing
// them and recommending the best point that passes (reports/advice/sweep_report.h).
// Blocking; a point that fails does not stop the sweep, an interrupt does.
#pragma once

#include <string>

#include "harness/cli/report_output.h"
#include "harness/run/runner.h"
#include "harness/scenario/scenario_loader.h"

namespace chaosbench::harness {

// Returns the exit code: 0 when a point passed (and was recommended), 1 when none did,
// 130 when interrupted; a host or scenario problem of a point ends the sweep with its code.
// `scenario_text` is the file's content as read once (a file edited mid-sweep changes no point).
int run_sweep(const std::string& scenario_text, const std::string& scenario_file, const LoadOptions& load, const Scenario& scenario,
              const RunOptions& run, const ReportOptions& reports);

}  // namespace chaosbench::harness

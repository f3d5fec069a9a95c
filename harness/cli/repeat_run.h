// run --repeat N: the scenario run N times, each a fresh run of its own (OUT/run-NN/ with
// all its reports), then OUT/results.json combining them (reports/gate/repeat_combine.h) with
// every report of it; --baseline gates that combined result run by run
// (reports/gate/gate_runs.h). With --interleave BASELINE_SCENARIO the baseline's runs alternate
// with the scenario's in ABBA order (A B, B A, A B, ...: a drift of the machine's speed
// over the session falls on both sides alike), go to OUT/baseline/run-NN/ and combine
// into OUT/baseline/results.json, which is then the baseline.
// Blocking; a run that fails does not stop the others, an interrupt or a host problem does.
#pragma once

#include <optional>
#include <string>

#include "harness/cli/report_output.h"
#include "harness/run/runner.h"
#include "harness/scenario/scenario_loader.h"

namespace chaosbench::harness {

// A scenario as run: its file, its text as read once (a file edited mid-series changes no
// run) and what it resolved to.
struct ScenarioSource {
  std::string file;
  std::string text;
  Scenario scenario;
};

struct RepeatPlan {
  int count = 1;
  std::optional<ScenarioSource> interleave;  // the baseline scenario run alternately
};

// Returns the exit code of the combined result (exit_code.h): 0 pass, 1 a check, a run or
// the gate failed; 130 when interrupted, 3 when the host could not do a run (the runs so
// far are kept, nothing is combined).
int run_repeat(const ScenarioSource& current, const RepeatPlan& plan, const RunOptions& run,
               ReportOptions reports);

}  // namespace chaosbench::harness

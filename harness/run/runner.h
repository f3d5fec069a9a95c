// Runs one scenario end to end: output directory, metrics server, workload processes,
// fault timeline, supervision, then aggregation and checks into the run model (the
// caller writes results.json and the other reports from it: cli/report_output.h). Every exit
// path (normal, error, SIGINT/SIGTERM, timeout) stops every process it started and
// reverts every fault it applied, in reverse order.
#pragma once

#include <string>
#include <vector>

#include "harness/core/exit_code.h"
#include "harness/scenario/scenario.h"
#include "reports/model/run_model.h"

namespace chaosbench::harness {

struct RunOptions {
  std::string out_dir;  // empty: runs/<scenario>-<UTC timestamp>/
  bool quiet = false;
  std::string metrics_listen;  // --metrics-listen ADDR:PORT: the live state as Prometheus text; "": none
  std::string grafana_url;     // --grafana URL: one region annotation per fault occurrence; "": none
  std::string grafana_dashboard;  // --grafana-dashboard UID: the dashboard they belong to; "": the organisation
};

struct RunOutcome {
  std::string run_dir;        // where logs/ and timeline.jsonl are, and the reports go
  reports::RunResult result;  // what results.json is to hold
  // With result.verdict (once a baseline gate is folded in), what the exit code is made
  // of: finish_reports (cli/report_output.h) computes it, once.
  VerdictSource source = VerdictSource::kThisRun;
};

// Blocks until the run is over. Throws HostError (exit 3) only for set-up failures
// before anything was started (output directory not writable, no socket).
RunOutcome run_scenario(const Scenario& scenario, const RunOptions& options);

}  // namespace chaosbench::harness

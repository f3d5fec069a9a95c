// Assembles the run model (results.json) from what a run recorded: environment, phases,
// aggregated metrics, series, fault records, checks and the verdict. Pure over its inputs.
#pragma once

#include <string>
#include <vector>

#include "harness/plan/fault_schedule.h"
#include "harness/collect/sample_store.h"
#include "harness/scenario/scenario.h"
#include "reports/model/judgement.h"
#include "reports/model/run_model.h"

namespace chaosbench::harness {

struct ResultInputs {
  const Scenario& scenario;
  std::string started_at;
  double t0_wall;  // Unix seconds when the workload started
  double end_s;    // workload-relative end of the run
  const FaultSchedule& schedule;
  const std::vector<reports::FaultRecord>& faults;
  const std::vector<reports::ProcessRecord>& processes;
  const SampleStore& store;
  std::uint64_t malformed = 0;
  std::vector<std::string> malformed_examples;
  std::vector<reports::ProbeRecord> probes;  // the live probes' records
  std::optional<reports::AbortRecord> abort;  // when the run stopped itself
  bool diagnosed = false;  // the live diagnosis ran (diagnosis_derivation.h)
};

// `verdict` is the run's own (a pass unless something failed or it was interrupted);
// failed checks are folded into it (reports/model/judgement.h: they turn only a pass into a fail).
reports::RunResult build_result(const ResultInputs& in, const reports::Judgement& verdict);

// Host name, kernel, CPUs: what results.json's "environment" says of this machine.
reports::Environment describe_environment();

}  // namespace chaosbench::harness

// The blind diagnosis, live (harness/derive/live_diagnosis.h, docs/diagnosis.md): fed from
// the store once a second from the workload's start, when something measures the nodes
// (telemetry_collector.h). A culprit named is a harness event (the timeline shows it;
// diagnosis/time_to_localise is derived from it). See run_collector.h for the contract.
#pragma once

#include <memory>

#include "harness/derive/live_diagnosis.h"
#include "harness/run/run_collector.h"
#include "harness/run/telemetry_collector.h"

namespace chaosbench::harness {

class DiagnosisCollector final : public RunCollector {
 public:
  // Reads what `telemetry` measures; `telemetry` outlives it (it stops later: the list
  // holds it first).
  explicit DiagnosisCollector(const TelemetryCollector& telemetry) : telemetry_(telemetry) {}
  ~DiagnosisCollector() override { stop(); }

  void at(Stage stage, const RunContext& ctx) override;
  void stop() override;
  void add_to(ResultInputs& in) const override { in.diagnosed = diagnosed_; }

 private:
  const TelemetryCollector& telemetry_;
  std::unique_ptr<LiveDiagnosis> diagnosis_;
  bool diagnosed_ = false;
};

}  // namespace chaosbench::harness

// The scenario's live probes (harness/probes/probe_engine.h, docs/probes.md) on a run: the
// probes are made at bring-up (a probe that cannot be made fails the run before the
// workload starts) and evaluated on threads of their own from the ranks' start; they see
// the fault timeline as the run's thread acts it out, say before the first fault whether
// the system is steady, and decide the stop condition. Each change of a probe's outcome
// is a timeline line; the live state shows every outcome. See run_collector.h for the
// contract.
#pragma once

#include <memory>

#include "harness/run/run_collector.h"

namespace chaosbench::harness {

class ProbeCollector final : public RunCollector {
 public:
  ~ProbeCollector() override { stop(); }

  void at(Stage stage, const RunContext& ctx) override;
  void stop() override;
  void on_fault(const FaultTransition& t) override;
  bool before_first_fault(std::string* why) override;
  void faults_finished() override;
  std::optional<AbortDecision> abort_decision() override;
  // A stop condition is noticed within 20 ms of being decided (fault/abort_latency).
  bool wants_quick_ticks() const override { return engine_ && ctx_->scenario.abort.has_value(); }
  void add_to(ResultInputs& in) const override;

 private:
  void make(const RunContext& ctx);
  void result(const ProbeSpec& spec, const reports::ProbeTransition& r, bool changed) const;

  const RunContext* ctx_ = nullptr;
  std::unique_ptr<ProbeEngine> engine_;  // none without probes
};

}  // namespace chaosbench::harness

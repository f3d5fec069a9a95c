// The kill switch on a run (kill_switch.h): from bring-up, the `stop` file in the output
// directory stops the run as a stop condition would; once honoured, the file is removed.
// See run_collector.h for the contract.
#pragma once

#include <memory>

#include "harness/run/kill_switch.h"
#include "harness/run/run_collector.h"

namespace chaosbench::harness {

class KillSwitchCollector final : public RunCollector {
 public:
  void at(Stage stage, const RunContext& ctx) override;
  void stop() override {}
  std::optional<AbortDecision> abort_decision() override;
  void abort_carried_out() override;

 private:
  const RunContext* ctx_ = nullptr;
  std::unique_ptr<KillSwitch> switch_;
};

}  // namespace chaosbench::harness

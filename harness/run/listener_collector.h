// `run --metrics-listen` (docs/prometheus.md): the run's live state and the store's newest
// values as Prometheus text, on each scrape. It listens before anything is made (a port
// in use is exit 3 with nothing to undo) and serves until the run's object goes, the final
// state included. See run_collector.h for the contract.
#pragma once

#include <memory>

#include "harness/prometheus/metrics_listener.h"
#include "harness/run/run_collector.h"

namespace chaosbench::harness {

class ListenerCollector final : public RunCollector {
 public:
  void at(Stage stage, const RunContext& ctx) override;
  bool stops_last() const override { return true; }
  void stop() override {}  // it serves the final state until destroyed

 private:
  std::string render(const RunContext& ctx) const;

  std::unique_ptr<prometheus::MetricsListener> listener_;
};

}  // namespace chaosbench::harness

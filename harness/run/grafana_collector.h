// `run --grafana` (docs/prometheus.md): one region annotation per fault occurrence, from
// its start to its end, posted from a thread of its own. It stops last: the unwind's
// reverts are queued and posted while the nodes stop, then what is still queued gets a
// few seconds. A failed annotation is a warning and a timeline line, never a failed run.
// See run_collector.h for the contract.
#pragma once

#include <memory>

#include "harness/grafana/annotation_poster.h"
#include "harness/run/run_collector.h"

namespace chaosbench::harness {

class GrafanaCollector final : public RunCollector {
 public:
  void at(Stage stage, const RunContext& ctx) override;
  bool stops_last() const override { return true; }
  void stop() override;
  void on_fault(const FaultTransition& t) override;

 private:
  const RunContext* ctx_ = nullptr;
  std::unique_ptr<grafana::AnnotationPoster> poster_;
};

}  // namespace chaosbench::harness

#include "harness/run/diagnosis_collector.h"

#include "harness/cluster/node_identity.h"

namespace chaosbench::harness {

// At the workload's start (its time origin). Blind: it reads the store only. The callback
// runs on the diagnosis's thread: harness_event writes only the store and the timeline,
// which are thread-safe.
void DiagnosisCollector::at(Stage stage, const RunContext& ctx) {
  if (stage != Stage::kWorkload || !telemetry_.measuring()) return;
  auto event = ctx.harness_event;
  diagnosis_ = std::make_unique<LiveDiagnosis>(
      ctx.store, ctx.t0_wall, ctx.scenario.mesh.window.seconds(),
      [event](const reports::DiagnosisCulprit& c, int /*named so far*/) {
        event("diagnosis_named", {{"class", c.cls}, {"component", c.component}, {"what", c.what},
                                  {"confidence", c.confidence}, {"abnormal_since_s", c.start_s}});
      });
  for (const auto& l : *ctx.launches) diagnosis_->set_rank_node(l.rank, NodeIdentity::hostname(l.node));
  diagnosis_->start();
  diagnosed_ = true;
}

void DiagnosisCollector::stop() {
  if (diagnosis_) diagnosis_->stop();
  diagnosis_.reset();
}

}  // namespace chaosbench::harness

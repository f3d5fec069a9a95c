// Metrics of the scenario's live probes and of an abort, from their records in the run
// model (reports::ProbeRecord, reports::AbortRecord):
// - probe/failures{probe, phase="overall"}: per probe, its failed evaluations;
// - fault/abort_latency{phase="overall"}: (reverted_s - decided_s) x 1000 ms, from the
//   stop condition being decided to every fault reverted; absent without an abort or when
//   no revert followed it.
// Pure over values; the result builder calls it once the probes and the abort are recorded.
#pragma once

#include <optional>
#include <vector>

#include "reports/model/run_model.h"

namespace chaosbench::harness {

// Records with the catalogue's unit and better-direction, probe/failures in the probes'
// order then fault/abort_latency.
std::vector<reports::MetricRecord> probe_metrics(const std::vector<reports::ProbeRecord>& probes,
                                                 const std::optional<reports::AbortRecord>& abort);

}  // namespace chaosbench::harness

// diagnosis/time_to_localise from the live diagnosis's events (live_diagnosis.h): the one
// place that puts the blind diagnosis beside the fault list, after the run, to score it.
#pragma once

#include <vector>

#include "reports/model/run_model.h"

namespace chaosbench::harness {

// time_to_localise: the first "diagnosis_named" event at or after the first applied
// fault's start, less that start (none without an applied fault or a naming after it).
std::vector<reports::MetricRecord> diagnosis_metrics(const std::vector<reports::EventRecord>& events,
                                                     const std::vector<reports::FaultRecord>& faults, bool ran);

}  // namespace chaosbench::harness

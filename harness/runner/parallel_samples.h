// A hybrid-parallel rank labels its per-step samples with where it sits (tp_rank,
// pp_stage, dp_rank; docs/metrics-protocol.md, "Hybrid parallelism"), so the aggregator
// keeps one record per rank of each. These are the records a data-parallel run has on top:
// the same samples pooled over every rank, the three coordinate labels dropped, so a
// hybrid job has train/step_time{phase}, comm/time{phase, group=tp|pp|dp} and the rest,
// and reports, checks and tuning advice read it as they read a data-parallel job. Pure.
#pragma once

#include <vector>

#include "harness/runner/sample_store.h"
#include "reports/run_model.h"

namespace chaosbench::harness {

// Records as aggregate() makes them (value by the catalogue's aggregation, stats, one per
// phase and overall) of the samples that carry a coordinate label, pooled without them.
// A name that some rank also sent without coordinates is left alone: its pooled record
// would have the labels of the aggregator's own. Nothing when no sample has coordinates.
std::vector<reports::MetricRecord> pool_parallel_samples(const std::vector<StoredSample>& samples, double t0_wall,
                                                         const std::vector<reports::Phase>& phases);

}  // namespace chaosbench::harness

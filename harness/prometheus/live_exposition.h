// What `run --metrics-listen` serves: a run's live state and each metric's newest value as
// one Prometheus text exposition (the series are listed in docs/prometheus.md). A pure
// function of its inputs, so tests render it without a run; the listener calls it on
// each scrape, never in between.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/collect/live_status.h"
#include "harness/collect/sample_store.h"

namespace chaosbench::harness::prometheus {

struct LiveExpositionInputs {
  const LiveSnapshot& live;
  const std::vector<LatestSample>& latest;  // SampleStore::latest()
  double elapsed_s = 0;                     // since the workload started (since set-up before)
  std::uint64_t samples_received = 0;
  std::uint64_t events_received = 0;
};

// The run's own families first (chaosbench_run_info, _phase, _fault_active...), then one
// gauge family per workload metric, named by metric_name(). A metric whose Prometheus name
// is one of the run's own, or another metric's that sorts first, is left out: a family
// must be one metric's.
std::string render_live_exposition(const LiveExpositionInputs& in);

}  // namespace chaosbench::harness::prometheus

// A metric probe: a statistic of one metric over a sliding window of the run's own
// samples ("infer/error_rate mean over 10s <= 0.05"). Reads the SampleStore in place
// (SampleStore::visit_recent), so one evaluation costs the window's samples, not the run's.
#pragma once

#include <vector>

#include "harness/probes/probe_check.h"

namespace chaosbench::harness::probes {

class MetricProbe : public ProbeCheck {
 public:
  MetricProbe(ProbeSpec spec, const SampleStore* store);

  // The samples of the metric whose labels include the probe's and whose time (the
  // sender's clock; a sample sent without one has its receive time) lies in
  // [now - window, now]. No such sample: not ok, "no samples of X in the last 10s" (a
  // system that stopped reporting cannot vouch for itself), except for stat "count",
  // whose 0 is judged like any count. Never blocks beyond the store's lock.
  ProbeOutcome evaluate(double now_wall) override;

 private:
  ProbeSpec spec_;
  const SampleStore* store_;
  std::vector<double> values_;  // reused between evaluations: no allocation once warm
  bool reported_ = false;        // a sample of the series was in some window already
};

// The statistic `stat` (mean, min, max, p50, p90, p99, sum, count, last) of `values`,
// which it may reorder; `last` is the value of the newest sample, given apart. Pure.
double window_statistic(const std::string& stat, std::vector<double>& values, double last);

}  // namespace chaosbench::harness::probes

// A probe's track on the run's timeline: its transitions (ProbeRecord) as stretches of one
// outcome, the shape report.html's probe lanes and trace.json's probe track both draw.
// Pure over the run model.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "reports/model/run_model.h"

namespace chaosbench::reports {

// [start_s, end_s) during which every evaluation of the probe gave `ok`; `value` and
// `evidence` are those of the transition that began it.
struct ProbeSpan {
  double start_s = 0;
  double end_s = 0;
  bool ok = true;
  std::optional<double> value;
  std::string evidence;
};

// One span per transition, each lasting until the next transition or `end_s` (the end of
// the run): a probe records changes only, so its last outcome is taken to hold to the end.
// A stretch that an inactive transition begins has no span (nothing was evaluated).
// Transitions out of time order are sorted first; a span that would end before it starts
// (a transition after `end_s`) is empty, never negative.
std::vector<ProbeSpan> probe_spans(const ProbeRecord& probe, double end_s);

}  // namespace chaosbench::reports

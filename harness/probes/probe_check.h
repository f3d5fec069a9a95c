// The probe evaluator interface: one object per scenario probe that answers "does it
// hold now?". The probe engine (scheduling, modes, the abort decision) calls it; the four
// kinds implement it beside this header (metric_probe, http_probe, command_probe,
// prometheus_probe).
#pragma once

#include <memory>

#include "harness/probes/probe_context.h"
#include "harness/probes/probe_outcome.h"
#include "harness/scenario/probe_spec.h"

namespace chaosbench::harness::probes {

class ProbeCheck {
 public:
  virtual ~ProbeCheck() = default;
  // Blocks at most the probe's timeout; never throws (a failure to evaluate is !ok with
  // evidence). `now_wall`: Unix seconds, the harness clock. Thread: any one thread at a
  // time (an http or command probe may switch that thread into a node's namespace for
  // the call and back).
  virtual ProbeOutcome evaluate(double now_wall) = 0;
};

// The evaluator of `spec`'s kind. `ctx` is copied; what it points to (the store) must
// outlive the evaluator. Never throws for a spec the parser accepted.
std::unique_ptr<ProbeCheck> make_probe_check(const ProbeSpec& spec, const ProbeContext& ctx);

}  // namespace chaosbench::harness::probes

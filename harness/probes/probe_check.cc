// The one table from a probe's kind to its evaluator.
#include "harness/probes/probe_check.h"

#include "harness/probes/command_probe.h"
#include "harness/probes/http_probe.h"
#include "harness/probes/metric_probe.h"
#include "harness/probes/prometheus_probe.h"

namespace chaosbench::harness::probes {

std::unique_ptr<ProbeCheck> make_probe_check(const ProbeSpec& spec, const ProbeContext& ctx) {
  switch (spec.kind) {
    case ProbeKind::kMetric: return std::make_unique<MetricProbe>(spec, ctx.store);
    case ProbeKind::kHttp: return std::make_unique<HttpProbe>(spec, ctx);
    case ProbeKind::kCommand: return std::make_unique<CommandProbe>(spec, ctx);
    case ProbeKind::kPrometheus: return std::make_unique<PrometheusProbe>(spec, ctx);
  }
  return std::make_unique<MetricProbe>(spec, ctx.store);
}

}  // namespace chaosbench::harness::probes

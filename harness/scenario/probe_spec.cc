// Names of probe kinds and modes, as scenario files and results.json spell them.
#include "harness/scenario/probe_spec.h"

namespace chaosbench::harness {

std::string_view to_string(ProbeKind kind) {
  switch (kind) {
    case ProbeKind::kMetric: return "metric";
    case ProbeKind::kHttp: return "http";
    case ProbeKind::kCommand: return "command";
    case ProbeKind::kPrometheus: return "prometheus";
  }
  return "metric";
}

std::string probe_mode_text(const ProbeSpec& probe) {
  switch (probe.mode) {
    case ProbeMode::kBefore: return "before";
    case ProbeMode::kContinuous: return "continuous";
    case ProbeMode::kDuring: return "during:" + probe.during;
    case ProbeMode::kAfter: return "after";
  }
  return "continuous";
}

}  // namespace chaosbench::harness

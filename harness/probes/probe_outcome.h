// What one evaluation of a probe found: pass or fail, the number it judged (when there is
// one) and a line a person reads in reports ("infer/error_rate mean 0.41 over the last
// 10s (12 samples) > max 0.05"). A plain value; the probe engine keeps and reports them.
#pragma once

#include <optional>
#include <string>

namespace chaosbench::harness::probes {

struct ProbeOutcome {
  bool ok = false;
  // metric: the statistic; http: the JSON field's number, else the status; command: the
  // exit code; prometheus: the query's first value. Absent when nothing was measured.
  std::optional<double> value;
  std::string evidence;
};

}  // namespace chaosbench::harness::probes

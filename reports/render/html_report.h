// report.html: the self-contained tuning report a person opens. One file: every script
// and style inline, a Content-Security-Policy that forbids remote loads, readable offline,
// at 1280 px and on a phone, and in print. The skeleton is reports/render/html/report_template.html,
// compiled into the binary; charts use the Chart.js that Debian ships (libjs-chart.js),
// also compiled in (docs/reports.md says why). Contents, in this order: verdict and
// failed checks; a timeline per key metric with fault windows shaded and labelled; the
// per-phase metric table with baseline deltas (confidence intervals, PASS/WARN/FAIL)
// when run.comparison is set; latency percentiles; a per-rank heatmap of step time;
// checkpoint and recovery breakdown (goodput, badput buckets); tuning advice; environment;
// the resolved scenario. Long series are downsampled for display keeping extremes, so
// the file stays under 5 MB for runs of 10^6 samples.
// Pure: the run model in, the document out.
#pragma once

#include <string>

#include "reports/model/run_model.h"

namespace chaosbench::reports {

std::string render_html(const RunResult& run);

}  // namespace chaosbench::reports

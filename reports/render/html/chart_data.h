// The one JSON blob report.html's charts are drawn from: fault windows, the abort, a timeline per key
// metric (downsampled, keeping extremes), latency percentiles per phase and the goodput /
// badput breakdown. The page's script (reports/render/html/report_template.html) reads exactly this.
#pragma once

#include <string>
#include <string_view>

#include "reports/model/run_model.h"

namespace chaosbench::reports::html {

// Budget of line points over all timelines: ~14 bytes each keeps the blob near 2 MB.
inline constexpr std::size_t kTimelinePointBudget = 150000;
// Longest line drawn (points); a longer series is bucketed to its minima and maxima.
inline constexpr std::size_t kMaxLinePoints = 2000;

// The JSON text, safe inside <script type="application/json">: every '<' is written as
// \u003c, so no label can close the element.
std::string chart_data_json(const RunResult& run);

// The end of the timelines' x axis (seconds since the workload started): the run's duration,
// or its last sample when one came later.
double timeline_duration(const RunResult& run);

// Metrics a timeline is drawn for, in the page's order: the key ones first, then others
// with enough points (at most 8).
std::vector<std::string> timeline_metrics(const RunResult& run);

// Whether a metric outside the catalogue (a `command` workload's own) is charted as a
// latency, guessed from its name: "latency" in it, or a name ending in "_time", "/ttft" or
// "/tpot", outside the resilience/, ckpt/ and fault/ families (whose times are to an event,
// not of a repeated operation). Catalogue metrics say it in their row
// (MetricDisplay::latency_like), which agrees with this guess for every catalogued name.
bool name_looks_latency_like(std::string_view name);

}  // namespace chaosbench::reports::html

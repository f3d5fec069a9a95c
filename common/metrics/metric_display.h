// How reports show a catalogue metric: which summaries list it, in what order, and how
// its samples are charted. These hints live in the metric's catalogue row
// (common/metrics/metric_catalogue.cc), so a reporter keeps no list of metric names of its own.
// A rank is 1-based and orders the metrics that have it; 0 means "not shown there".
// Metrics outside the catalogue (a `command` workload's own) have no hints.
#pragma once

#include <string_view>

namespace chaosbench::common {

struct MetricDisplay {
  // Row order of the Markdown summary's key-metrics table.
  int key_rank = 0;
  // Charted first, in this order, in the HTML report's timelines; other series follow
  // only when they vary.
  int timeline_rank = 0;
  // A latency: the HTML report charts its p50/p90/p99 per phase (when the record has
  // stats in a time unit). Times to an event (time_to_recover, a checkpoint's save time)
  // are not latencies of a repeated operation, so they are not marked.
  bool latency_like = false;
  // Left out of the console's per-fault-window effects because another metric says the
  // same (algbw is busbw over a constant factor) or it mixes what each window saw.
  bool effects_hidden = false;
  // Column order of a sweep's table; the column shows `sweep_stat` ("value" or a stats
  // field) of the overall records.
  int sweep_column = 0;
  std::string_view sweep_stat = "value";
  // Which metric a sweep recommends by (the first one any point has, in this order),
  // and the per-step metric whose samples carry the confidence of the margin.
  int sweep_objective = 0;
  std::string_view sweep_proxy;
};

}  // namespace chaosbench::common

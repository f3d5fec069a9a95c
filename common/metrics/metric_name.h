// What a metric's name may be wherever a person writes one (checks, probes, a scrape's
// rename): chaosbench's own slash-separated names ("comm/busbw"), or Prometheus names
// ("node_load1", "http_requests_total:rate"), which scraped series keep.
#pragma once

#include <string_view>

namespace chaosbench::common {

// [a-zA-Z_:][a-zA-Z0-9_:]*
bool is_prometheus_metric_name(std::string_view name);
// [a-zA-Z_][a-zA-Z0-9_]*
bool is_prometheus_label_name(std::string_view name);
// Slash-separated without an empty segment ("infer/latency"), or a Prometheus name.
bool is_metric_name(std::string_view name);

}  // namespace chaosbench::common

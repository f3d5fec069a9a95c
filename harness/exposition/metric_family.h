// What one scrape of a Prometheus or OpenMetrics endpoint says, as plain values: metric
// families (name, type, help, unit) and their samples with labels, value and timestamp.
// The exposition parser (exposition_parser.h) makes them; the scraper turns them into
// the run's samples. Knows nothing of HTTP or of the run.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace chaosbench::harness::prometheus {

// The two text formats an endpoint may answer in (content negotiation picks one).
enum class ExpositionFormat {
  kPrometheusText,  // text/plain; version=0.0.4: timestamps in milliseconds, no # EOF
  kOpenMetrics,     // application/openmetrics-text; version=1.0.0: seconds, ends in # EOF
};

// The union of both formats' types; 0.0.4's "untyped" is OpenMetrics' "unknown".
enum class MetricType { kUnknown, kCounter, kGauge, kHistogram, kGaugeHistogram, kSummary, kInfo, kStateSet };

std::string_view to_string(MetricType type);

// Labels in the order the line gave them; names are unique within one sample.
using LabelPairs = std::vector<std::pair<std::string, std::string>>;

struct ExpositionSample {
  std::string name;  // the sample's own name: "http_requests_total", "latency_bucket"
  LabelPairs labels;
  double value = 0;  // may be NaN or +-Inf
  std::optional<double> timestamp_s;  // seconds since the Unix epoch, as the line gave it
};

struct MetricFamily {
  std::string name;  // as # TYPE named it, or the sample's name for a family without one
  MetricType type = MetricType::kUnknown;
  std::string help;  // unescaped
  std::string unit;  // OpenMetrics # UNIT ("seconds"); "" otherwise
  std::vector<ExpositionSample> samples;
};

// The value of label `name` in `labels`, or nullptr.
const std::string* find_label(const LabelPairs& labels, std::string_view name);

}  // namespace chaosbench::harness::prometheus

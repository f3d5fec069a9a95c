// One scrape target's families turned into the run's samples (rank -1, the scrape's wall
// time, the series' labels plus `instance`), so scraped series get phases, charts,
// checks and gates like the workload's own:
//   gauge, unknown/untyped, info, stateset  the value, under the sample's name;
//   counter                 a per-second rate between two scrapes: "<sample>:rate"
//                           ("http_requests_total:rate"); none on the first scrape or
//                           across a reset (the value went down); _created is dropped;
//   histogram               "<family>_count:rate", "<family>_sum:rate", and over each
//                           interval "<family>:mean" (d_sum / d_count) and ":p50",
//                           ":p90", ":p99" from the buckets' increase; buckets themselves
//                           are not kept;
//   summary                 its quantiles as gauges ("<family>" with label quantile),
//                           "_count:rate", "_sum:rate", ":mean";
//   gaugehistogram          _gcount and _gsum as gauges.
// `rename` maps a family's name (or a counter's sample name) to the name its series get:
// the whole name for a one-series family (gauge, counter rate, info...), the part
// replacing the family's name for histograms and summaries ("lat" -> "lat:p99").
// Labels named phase, rank or instance are kept as exported_phase and so on (the run's
// own labels win, as Prometheus does without honor_labels). NaN and infinite values are
// left out (no statistic can use them).
// Threads: one converter per target, used by one thread.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "bench/protocol/record.h"
#include "harness/exposition/metric_family.h"
#include "harness/exposition/metric_filter.h"
#include "harness/scenario/scrape_spec.h"

namespace chaosbench::harness::prometheus {

struct ConvertedScrape {
  std::vector<bench::Sample> samples;
  std::size_t series = 0;          // series of kept families in this scrape
  std::size_t dropped_series = 0;  // beyond the converter's max_series, left out
};

class ScrapeConverter {
 public:
  static constexpr std::size_t kDefaultMaxSeries = 2000;

  // `instance`: the value of the label every sample gets ("127.0.0.1:9100").
  // Throws std::regex_error for a bad "/regex/" in spec.metrics.
  ScrapeConverter(const ScrapeSpec& spec, std::string instance, std::size_t max_series = kDefaultMaxSeries);

  // The samples of one successful scrape at `time` (Unix seconds). Rates need the
  // previous successful scrape; a failed scrape in between only widens the interval.
  ConvertedScrape convert(const std::vector<MetricFamily>& families, double time);

 private:
  struct Previous {
    std::unordered_map<std::string, double> values;                                  // counters, _sum, _count
    std::unordered_map<std::string, std::vector<std::pair<double, double>>> buckets;  // histograms
  };
  class Pass;  // the work of one convert() call (scrape_converter.cc)

  MetricFilter filter_;
  std::map<std::string, std::string> rename_;
  std::string instance_;
  std::size_t max_series_;
  Previous previous_;
  double previous_time_ = 0;  // 0: no successful scrape yet
};

}  // namespace chaosbench::harness::prometheus

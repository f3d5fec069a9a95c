// A parser of the Prometheus text exposition format 0.0.4 and the OpenMetrics 1.0 text
// format: what GET /metrics of node-exporter, vLLM, Triton or our serve replicas answers.
// Debian packages no C++ reader of it (prometheus-cpp only writes), hence this one.
// It reads the whole grammar (HELP/TYPE/UNIT/EOF, every type and its sample suffixes,
// escaped and UTF-8 label values, NaN/Inf, timestamps, exemplars, which it skips) and
// refuses the rest with line:column. Bounded: input size, line length, labels per sample,
// samples and families, so hostile input costs at most those.
// Threads: pure functions, no state.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "harness/exposition/metric_family.h"

namespace chaosbench::harness::prometheus {

struct ParseLimits {
  std::size_t max_bytes = 16u << 20;   // the whole exposition
  std::size_t max_line = 64u << 10;    // one line, in bytes
  std::size_t max_labels = 64;         // labels on one sample
  std::size_t max_samples = 1u << 20;  // sample lines in all
  std::size_t max_families = 1u << 16;
};

// Malformed input: what is wrong and where (1-based line; column in characters).
class ExpositionError : public std::runtime_error {
 public:
  ExpositionError(int line, int column, const std::string& message);
  int line() const { return line_; }
  int column() const { return column_; }

 private:
  int line_;
  int column_;
};

// The families in the order they first appear. Samples of a family declared by # TYPE
// (or # HELP, # UNIT) join it by their suffix (a counter's _total and _created, a
// histogram's _bucket/_count/_sum/_created, a gauge histogram's _gcount/_gsum, a
// summary's _count/_sum/_created, an info's _info); a sample of no declared family makes
// an unknown family of its own name. Throws ExpositionError for malformed input or input
// past `limits`; never anything else for any bytes.
std::vector<MetricFamily> parse_exposition(std::string_view text, ExpositionFormat format,
                                           const ParseLimits& limits = {});

// The format a response's Content-Type names: OpenMetrics for
// "application/openmetrics-text...", the 0.0.4 text format for anything else.
ExpositionFormat format_of_content_type(std::string_view content_type);

// What a scraper sends as Accept: OpenMetrics 1.0 first, then the 0.0.4 text format.
inline constexpr std::string_view kAcceptHeader =
    "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";

}  // namespace chaosbench::harness::prometheus

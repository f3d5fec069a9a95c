// Writes Prometheus text exposition format 0.0.4: families of samples, each opened once
// by its # HELP and # TYPE lines, with names sanitised and label values escaped. Knows
// nothing of runs: metrics_exposition.h decides what a run exposes, this only spells it.
// Our metric names map to Prometheus names thus (docs/prometheus.md):
//   prefix "chaosbench_", then every character outside [a-zA-Z0-9_] becomes "_":
//   "coll/busbw" -> "chaosbench_coll_busbw", "infer/p99-latency" -> "chaosbench_infer_p99_latency".
// Label names: the same replacement, a leading digit gets "_" in front and a leading "__"
// (reserved for Prometheus itself) becomes "x__".
// Threads: a writer is one thread's value.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace chaosbench::harness::prometheus {

// Label name and (unescaped) value, in the order they are written.
using ExpositionLabels = std::vector<std::pair<std::string, std::string>>;

// "coll/busbw" -> "chaosbench_coll_busbw" (see above). Distinct names can meet here
// ("a/b" and "a_b"); the caller decides what to do with the second.
std::string metric_name(std::string_view ours);
// A valid label name for any string; "" becomes "_".
std::string label_name(std::string_view ours);
// The label-value escapes of the format: backslash, double quote and newline.
std::string escape_label_value(std::string_view value);
// The HELP text's escapes: backslash and newline.
std::string escape_help(std::string_view help);
// "NaN", "+Inf", "-Inf", else the shortest text that reads back as the same double.
std::string format_value(double value);

class ExpositionWriter {
 public:
  // Opens a family: "# HELP name help" and "# TYPE name type" (type: gauge, counter,
  // untyped...). `name` must be a valid metric name (metric_name() gives one). Each
  // family is to be opened once and its samples written before the next is opened: the
  // format wants a family's lines together.
  void family(std::string_view name, std::string_view type, std::string_view help);
  // "name{l1="v1",l2="v2"} value": label names are sanitised by label_name(), values
  // escaped; no timestamp (Prometheus stamps the scrape).
  void sample(std::string_view name, const ExpositionLabels& labels, double value);

  const std::string& text() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

}  // namespace chaosbench::harness::prometheus

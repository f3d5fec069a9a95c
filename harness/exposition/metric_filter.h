// Which metric families a scrape keeps (a ScrapeSpec's `metrics`): exact names, or
// "/REGEX/" entries (ECMAScript, matched against the whole name). A family matches when
// its own name or one of its samples' names does, so "http_requests_total" picks an
// OpenMetrics counter family "http_requests" and "latency_bucket" a histogram.
// Threads: const after construction; matches() may be called from any thread.
#pragma once

#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "harness/exposition/metric_family.h"

namespace chaosbench::harness::prometheus {

class MetricFilter {
 public:
  // Throws std::regex_error for an entry "/.../" that does not compile (the scenario
  // parser reports it first: regex_problem).
  explicit MetricFilter(const std::vector<std::string>& entries);

  bool keeps_everything() const { return names_.empty() && patterns_.empty(); }
  bool matches(std::string_view name) const;
  bool matches(const MetricFamily& family) const;

  // Whether `entry` is written as a regex ("/.../", at least one character between).
  static bool is_regex(std::string_view entry);
  // Why the regex of `entry` does not compile, or nullopt (also for a plain name).
  static std::optional<std::string> regex_problem(const std::string& entry);

  // Names longer than this never match a regex: std::regex recurses per character, and a
  // hostile endpoint must not exhaust the stack with a 60 KB name.
  static constexpr std::size_t kMaxRegexSubject = 512;

 private:
  std::vector<std::string> names_;
  std::vector<std::regex> patterns_;
};

}  // namespace chaosbench::harness::prometheus

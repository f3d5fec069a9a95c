// A scenario's Prometheus scrape targets (docs/scenario-format.md "scrape"): endpoints in
// the Prometheus or OpenMetrics text format read during the run into ordinary samples.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "common/values/units.h"

namespace chaosbench::harness {

struct ScrapeSpec {
  std::string url;  // http(s); placeholders {node.N.addr}
  common::Duration every{std::chrono::seconds(1)};
  common::Duration timeout{std::chrono::seconds(2)};
  // Which metric families to keep: exact names, or "/REGEX/" (ECMAScript, whole name);
  // empty: every family.
  std::vector<std::string> metrics;
  // A family's name -> the metric name its samples get (default: the family's name, a
  // counter's rate with ":rate" appended).
  std::map<std::string, std::string> rename;
  // The node whose network namespace the scrape runs from; -1: the controller's own.
  int node = -1;
};

}  // namespace chaosbench::harness

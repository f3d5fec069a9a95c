// A scenario's live probes and stop condition (docs/scenario-format.md "probes", "abort"):
// what is watched while the run goes, and when the run stops itself.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "bench/protocol/record.h"
#include "common/values/units.h"

namespace chaosbench::harness {

enum class ProbeKind {
  kMetric,      // a statistic of a metric over a sliding window of the run's own samples
  kHttp,        // the status (and optionally a JSON field) of a URL
  kCommand,     // the exit code of a program run on a node
  kPrometheus,  // an instant PromQL query against a Prometheus HTTP API
};

enum class ProbeMode {
  kBefore,      // steady state: must hold before the first fault; otherwise no fault runs
  kContinuous,  // from the workload's start to its end
  kDuring,      // only while the fault named by ProbeSpec::during is in effect
  kAfter,       // after the last fault was reverted, to the end
};

struct ProbeSpec {
  std::string name;  // valid_name(); names the probe in results, metrics and `abort.when`
  ProbeKind kind = ProbeKind::kMetric;
  ProbeMode mode = ProbeMode::kContinuous;
  std::string during;  // kDuring: a fault's name
  common::Duration interval{std::chrono::seconds(1)};  // >= 100ms
  // How long one evaluation may take (http, command, prometheus); past it, it fails. At
  // most the interval (default: the interval), so an evaluation is over before the next
  // is due and a dead endpoint fails within one interval: abort's reaction stays within
  // `for` + interval. Metric probes never wait and take none.
  common::Duration timeout{std::chrono::seconds(1)};

  // The pass condition on the probe's number (metric: the statistic; http: the JSON field;
  // prometheus: the query's value; command: unused). Both absent for http/command means
  // the status or exit code alone decides.
  std::optional<double> min;
  std::optional<double> max;

  // kMetric
  std::string metric;            // "infer/error_rate"
  bench::Labels labels;          // a sample matches when it has every one of these
  std::string stat = "mean";     // mean, min, max, p50, p90, p99, sum, count, last
  common::Duration window{std::chrono::seconds(10)};
  // kHttp: url (placeholders {node.N.addr}); the status must be in expect_status (empty:
  // any 2xx); json_field is a JSON pointer ("/data/ready") whose number (or true/false as
  // 1/0) is checked against min/max, or whose text must equal `equals` when given.
  std::string url;
  std::vector<int> expect_status;
  std::string json_field;
  std::optional<std::string> equals;
  // kCommand: argv (no shell; placeholders {node.N.addr}), run on `node`; passes when it
  // exits 0 within timeout.
  std::vector<std::string> argv;
  // kHttp, kCommand and kPrometheus: the node whose network namespace the probe runs
  // from; -1: the controller's own (outside servers, a Prometheus). Command probes run
  // on this machine only (not in the agent modes yet).
  int node = -1;
  // kPrometheus: url is the server's base ("http://127.0.0.1:9090"), query the PromQL;
  // the first sample of the answer (a vector, a scalar) is checked against min/max; an
  // empty answer fails.
  std::string query;
};

// abort: {when: [probe names], for: DURATION}: when any of those probes has failed for
// `for` without a pass between, the run aborts (exit 4). `for` 0: at the first failure.
struct AbortSpec {
  std::vector<std::string> when;
  common::Duration for_{std::chrono::seconds(0)};
};

std::string_view to_string(ProbeKind kind);
// "before", "continuous", "during:NAME", "after"
std::string probe_mode_text(const ProbeSpec& probe);

}  // namespace chaosbench::harness

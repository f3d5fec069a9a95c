// The run model: what one chaosbench run produced, as plain values. results.json is its
// serialization (json_io.h); every reporter reads only this, never a live object.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "common/metrics/better.h"
#include "common/values/labels.h"
#include "reports/model/check_status.h"
#include "reports/model/gate_status.h"
#include "reports/model/repeat_record.h"
#include "reports/model/run_values.h"
#include "reports/model/scenario_facts.h"
#include "reports/model/schedule_entry.h"
#include "reports/model/verdict.h"

namespace chaosbench::reports {

inline constexpr int kSchemaVersion = 1;

// Labels keep their JSON type: the one type of common/values/labels.h.
using common::LabelValue;
using common::Labels;

struct Stats {
  std::uint64_t n = 0;
  double mean = 0, stddev = 0, min = 0, p50 = 0, p90 = 0, p99 = 0, max = 0, sum = 0;
};

struct MetricRecord {
  std::string name;
  std::string unit;
  common::Better better = common::Better::kUnknown;  // the catalogue's; kNone outside it
  Labels labels;       // always holds "phase"
  double value = 0;
  std::optional<Stats> stats;
  // A combined result of repeated runs: the record's figures in each run (value and stats
  // above are then medians over the runs).
  std::optional<RunValues> runs = std::nullopt;
};

struct Series {
  std::string name;
  std::string unit;
  Labels labels;
  std::vector<double> t;  // seconds since the workload started
  std::vector<double> v;
};

// Something that happened, as a workload (rank >= 0) or the harness (rank -1) reported
// it: train_start, failure_detected, checkpoint_saved, restart, ... Per-step events are
// not kept here (the series hold their numbers).
struct EventRecord {
  double t = 0;  // seconds since the workload started
  int rank = 0;
  std::string name;
  Labels fields;
};

struct Phase {
  std::string name;  // "baseline", "fault:NAME", "recovery:NAME"
  double start_s = 0;
  double end_s = 0;
};

struct FaultRecord {
  std::string name;
  std::string type;
  std::vector<std::string> targets;
  int occurrence = 1;  // 1-based, for repeated faults
  std::optional<double> applied_at_s;
  std::optional<double> reverted_at_s;
  std::string backend;
  std::optional<double> apply_latency_us;
  // The fault's own measurement of its effect (Fault::effect()); effect_error_pct is
  // fault/effect_error.
  std::map<std::string, double> effect;
  bool reversible = true;
  std::string error;  // why apply or revert failed, empty when both worked
};

struct CheckResult {
  std::string metric;
  Labels labels;
  std::string op;  // ">=", "<="
  double threshold = 0;
  std::optional<double> value;  // absent when no record matched
  CheckStatus status = CheckStatus::kFail;
  std::string message;
};

struct ProcessRecord {
  std::string role;  // "rank"
  int rank = 0;
  int restart = 0;              // 0 for the first life, then 1, 2, ... after restarts
  bool ended_by_fault = false;  // a fault (node.kill, process.signal) ended it on purpose
  std::string node;
  std::string host;  // the host the node ran on, in a multi-host run ("" on one machine)
  std::int64_t pid = 0;  // the process id there
  std::optional<int> exit_code;
  std::optional<int> signal;
  double started_at_s = 0;
  std::optional<double> ended_at_s;
  std::string stdout_log, stderr_log;  // relative to the run directory
};

// One CPU core's single-precision peak: lanes x 2 x FMA units x clock, each measured
// (bench/blas/cpu_peak.h). The denominator of train/mfu_hw on the CPU.
struct CpuPeakRecord {
  bool known = false;
  std::string isa;  // "avx512f", "avx2+fma", "sse"
  int lanes = 0;
  int fma_units = 0;
  double clock_ghz = 0;
  double nominal_ghz = 0;  // /proc/cpuinfo's "cpu MHz"
  double fma_gflops = 0;   // what an FMA loop sustained
  double peak_gflops = 0;
};

// One kernel the BLAS probe tried (harness/doctor/blas_choice.h).
struct BlasCandidateRecord {
  std::string name;      // OPENBLAS_CORETYPE asked for; "" for the library's own choice
  std::string corename;  // what ran
  double gflops = 0;
  double max_error = 0;
  bool correct = false;
  std::string problem;
};

// The BLAS kernel the workers got and why.
struct BlasRecord {
  std::string library;
  std::string detected;
  double detected_gflops = 0;
  std::string chosen;
  double chosen_gflops = 0;
  std::string best;
  double best_gflops = 0;
  std::string source;  // "probe", "cache", "environment", "scenario", "unavailable"
  std::string reason;
  std::string probed_at;
  std::vector<BlasCandidateRecord> candidates;
  CpuPeakRecord cpu;
};

// A host of a multi-host run (cluster.mode "ssh"): who it is and how its clock was
// matched to the controller's (every sample and event from it is moved by the offset).
struct HostRecord {
  std::string name;       // the inventory's
  std::string address;
  std::string hostname;   // what the host calls itself
  std::string interface;  // where its network faults acted ("" without network faults)
  double clock_offset_ms = 0;       // its clock minus the controller's
  double clock_uncertainty_ms = 0;  // the true offset is within offset ± this
};

struct Environment {
  std::string host;
  std::string kernel;
  int cpus = 0;
  std::string cluster;  // "local processes" or "network namespaces"
  std::map<std::string, std::string> backends;
  std::optional<BlasRecord> blas;  // workloads that use BLAS (train, serve, command)
  std::vector<HostRecord> hosts;   // multi-host runs: one per node
  // The fingerprint that says whether two runs may be compared (environment_diff.h).
  std::string testbed;                 // the user's label (CHAOSBENCH_TESTBED); "" for none
  std::string cpu_model;               // /proc/cpuinfo "model name"
  std::vector<std::string> cpu_flags;  // the ISA extensions that change kernels: avx2, avx512f, ...
  std::uint64_t memory_bytes = 0;      // MemTotal
  std::vector<std::string> gpus;       // "NVIDIA H200 (driver 570.86)", one per GPU; empty without
  std::string compiler;                // the one chaosbench was built with
  std::string git_commit;              // the commit the build was configured at; "" outside a checkout
  std::string scenario_hash;           // SHA-256 of the resolved scenario (overrides applied)
};

struct ProtocolStats {
  std::uint64_t samples = 0;
  std::uint64_t events = 0;
  std::uint64_t malformed = 0;
  std::vector<std::string> malformed_examples;  // the first few, with their reason
};

// One metric of this run against the same metric of a baseline run (chaosbench compare,
// run --baseline): the relative change of a statistic with its bootstrap confidence
// interval and a Mann-Whitney U test on the samples behind it (reports/gate/gate.h).
struct MetricComparison {
  std::string name;
  std::string unit;
  common::Better better = common::Better::kUnknown;  // the record's (only kHigher and kLower are gated)
  Labels labels;       // always holds "phase"
  std::string stat;    // the statistic compared: "p50", "p99", or "value" for a single number
  std::string basis = "samples";  // "samples": one run per side; "runs": one figure per run (--repeat)
  std::uint64_t n_baseline = 0, n_current = 0;  // samples (or runs) on each side
  double baseline = 0, current = 0;             // the statistic on each side
  double change = 0;                            // (current - baseline) / baseline
  std::optional<double> ci_low, ci_high;        // confidence interval of change (1 - alpha)
  std::optional<double> p_value;                // two-sided Mann-Whitney U
  double tolerance = 0.05;                      // a regression within it passes
  GateStatus status = GateStatus::kFail;
  std::string reason;                           // why, with the numbers
  // What the report plots for each side: the runs' figures (basis "runs"), or 21 evenly
  // spaced quantiles (0, 5, ..., 100 %) of the values tested (basis "samples": the whole
  // sample for a p50 row, its upper decile for a p99 row); one value for a single number.
  std::vector<double> baseline_points, current_points;
};

struct Comparison {
  std::string baseline_run;  // the baseline's run id (or file when it has none)
  std::string baseline_started_at;
  double alpha = 0.01;
  std::vector<MetricComparison> metrics;
  GateStatus verdict = GateStatus::kPass;  // the worst status of its metrics
};

// One change of a probe's outcome (the first evaluation, then each pass <-> fail), or the
// end of a stretch in which its mode made it active (`active` false: a `before` probe at
// the first fault, a `during` probe when its fault ended): the probe's track on the
// timeline.
struct ProbeTransition {
  double t = 0;  // seconds since the workload started
  bool ok = true;
  std::optional<double> value;  // the number judged, when the probe has one
  std::string evidence;         // what was seen: "infer/error_rate mean 0.41 over 3s > max 0.05"
  bool active = true;  // false: not evaluated from here until the next transition
};

// A live probe of the scenario (harness/scenario/probe_spec.h) and what it saw.
struct ProbeRecord {
  std::string name;
  std::string kind;  // "metric", "http", "command", "prometheus"
  std::string mode;  // "before", "continuous", "during:NAME", "after"
  std::uint64_t evaluations = 0;
  std::uint64_t failures = 0;  // the metric probe/failures{probe}
  std::vector<ProbeTransition> transitions;
};

// Why and when a run stopped itself: a stop condition (abort.when) held for its duration,
// or the kill switch (chaosbench stop, the stop file).
struct AbortRecord {
  std::string cause;     // a probe's name, or "kill switch"
  std::string evidence;  // the probe's last evidence, or who asked
  double decided_s = 0;  // when the condition was decided (seconds since the workload started)
  std::optional<double> reverted_s;  // when every fault was reverted after it
};

struct RunResult {
  int schema_version = kSchemaVersion;
  std::string tool_name = "chaosbench";
  std::string tool_version;
  std::string scenario_json;  // the resolved scenario, overrides applied (JSON text)
  ScenarioFacts scenario_facts;  // derived from scenario_json by set_scenario(), not serialized
  std::string scenario_name;
  std::string run_id;  // names the run's journal, runtime directory and cgroups
  Environment environment;
  std::uint64_t seed = 0;
  std::string started_at;  // UTC, ISO 8601
  double duration_s = 0;
  Verdict verdict = Verdict::kError;  // until judged: an unjudged result is no pass
  std::string reason;
  std::vector<Phase> phases;
  std::vector<FaultRecord> faults;
  std::vector<ScheduleEntry> schedule;  // the realised fault schedule, drawn before the run
  std::vector<MetricRecord> metrics;
  std::vector<Series> series;
  std::vector<CheckResult> checks;
  std::vector<ProcessRecord> processes;
  std::vector<EventRecord> events;  // in time order
  std::vector<ProbeRecord> probes;
  std::optional<AbortRecord> abort;
  std::optional<Comparison> comparison;  // against --baseline, when given
  std::optional<RepeatRecord> repeat;    // a combined result of `run --repeat N`
  ProtocolStats protocol;
};

using common::label_to_string;

// Sets the run's resolved scenario and the facts reports read from it: the one way both
// are set (where a run's result is built and where results.json is read back), so they
// never disagree.
void set_scenario(RunResult& run, std::string resolved_json);

}  // namespace chaosbench::reports

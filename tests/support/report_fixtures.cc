#include "report_fixtures.h"

#include <catch2/catch.hpp>
#include <algorithm>
#include <cstdlib>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

#include "reports/model/json_io.h"
#include "reports/model/text_format.h"
#include "test_util.h"

namespace chaosbench::test {

using namespace chaosbench::reports;

MetricRecord metric(const std::string& name, const std::string& unit, const std::string& phase, double value, Labels labels,
                    bool with_stats) {
  labels["phase"] = phase;
  MetricRecord m{name, unit, chaosbench::common::Better::kLower, std::move(labels), value, std::nullopt};
  if (name == "train/throughput" || name == "resilience/throughput_retention" || name == "train/straggler_score" ||
      name == "resilience/goodput" || name == "train/overlap")
    m.better = chaosbench::common::Better::kHigher;
  if (with_stats) m.stats = Stats{10, value, value / 10, value / 2, value, value * 1.2, value * 1.5, value * 2, value * 10};
  return m;
}

namespace {

Series series(const std::string& name, const std::string& unit, int rank, std::vector<double> t, std::vector<double> v) {
  return Series{name, unit, {{"rank", std::int64_t{rank}}}, std::move(t), std::move(v)};
}

// network.delay "slow-link" on `node` over [applied, reverted].
FaultRecord slow_link(const std::string& node, double applied, double reverted) {
  FaultRecord f;
  f.name = "slow-link";
  f.type = "network.delay";
  f.targets = {node};
  f.applied_at_s = applied;
  f.reverted_at_s = reverted;
  f.backend = "nfqueue";
  return f;
}

EventRecord event(double t, int rank, const std::string& name, Labels fields) { return {t, rank, name, std::move(fields)}; }

// A run of scenario `name` with the fixed identity every golden file shows: version, run
// id, host, seed, start time.
RunResult stamped_run(const std::string& name, std::string scenario_json) {
  RunResult run;
  run.tool_version = "0.1.0";
  run.scenario_name = name;
  set_scenario(run, std::move(scenario_json));
  run.run_id = "20240101T000000Z-" + name;
  run.environment.host = "testhost";
  run.seed = 7;
  run.started_at = "2024-01-01T00:00:00Z";
  return run;
}

}  // namespace

RunResult golden_run() {
  RunResult run = stamped_run("golden", R"({"name":"golden","cluster":{"nodes":2},"workload":{"kind":"train","bucket_size":"256KiB",)"
                                        R"("model":{"layers":[64,64,8]},"checkpoint":{"every_steps":10,"mode":"full","async":false},)"
                                        R"("recovery":{"mode":"restart"}}})");
  run.duration_s = 3.0;
  run.verdict = Verdict::kFail;
  run.reason = "1 of 2 checks failed";
  run.phases = {{"baseline", 0, 1}, {"fault:slow-link", 1, 2}, {"recovery:slow-link", 2, 3}};
  run.faults = {slow_link("node1", 1, 2)};

  for (const auto& [phase, scale] : std::vector<std::pair<std::string, double>>{
           {"baseline", 1.0}, {"fault:slow-link", 2.0}, {"recovery:slow-link", 1.1}, {"overall", 1.3}}) {
    run.metrics.push_back(metric("train/throughput", "samples/s", phase, 1000 / scale));
    run.metrics.push_back(metric("train/step_time", "ms", phase, 100 * scale, {}, true));
    run.metrics.push_back(metric("train/comm_time", "ms", phase, 40 * scale, {}, true));
    run.metrics.push_back(metric("train/rank_imbalance", "%", phase, 5 * scale));
    run.metrics.push_back(metric("train/straggler_score", "ratio", phase, 1.0, {{"rank", std::int64_t{0}}}));
    run.metrics.push_back(metric("train/straggler_score", "ratio", phase, 0.95 / scale, {{"rank", std::int64_t{1}}}));
  }
  run.metrics.push_back(metric("resilience/throughput_retention", "ratio", "fault:slow-link", 0.45));
  run.metrics.push_back(metric("resilience/time_to_recover", "s", "overall", 12.5,
                               {{"fault", std::string("slow-link")}, {"occurrence", std::int64_t{1}}}));
  run.metrics.push_back(metric("ckpt/save_time", "ms", "overall", 90, {}, true));
  for (const auto& [bucket, value] : std::vector<std::pair<std::string, double>>{
           {"checkpoint_save", 6.0}, {"recovery", 4.0}, {"wasted_progress", 1.5}})
    run.metrics.push_back(metric("resilience/badput", "%", "overall", value, {{"bucket", bucket}}));

  for (int rank = 0; rank < 2; ++rank) {
    run.series.push_back(series("train/step_time", "ms", rank, {0.6, 0.7, 1.9}, {100, 100, 200}));
    run.series.push_back(series("train/compute_time", "ms", rank, {0.6, 0.7, 1.9}, {60 + 5.0 * rank, 60, 70}));
    run.series.push_back(series("train/comm_time", "ms", rank, {0.6, 0.7, 1.9}, {40, 40, 130}));
  }
  run.events = {
      event(0.5, 0, "train_start", {{"reason", std::string("fresh")}, {"step", std::int64_t{0}}}),
      event(0.5, 1, "train_start", {{"reason", std::string("fresh")}, {"step", std::int64_t{0}}}),
      event(0.6, 0, "checkpoint_saved", {{"kind", std::string("full")}, {"step", std::int64_t{1}}, {"blocking_ms", 90.0}}),
      event(1.5, 1, "failure_detected", {{"error", std::string("read \"peer\" <reset> & closed")}, {"step", std::int64_t{2}}}),
      event(1.6, -1, "restart", {{"attempt", std::int64_t{1}}, {"ranks", std::int64_t{2}}}),
      event(1.65, 0, "train_start", {{"reason", std::string("restored")}, {"step", std::int64_t{1}}}),
  };

  run.checks = {
      {"train/throughput", {{"phase", std::string("baseline")}}, ">=", 500, 1000.0, CheckStatus::kPass, "train/throughput value = 1000 samples/s"},
      {"train/step_time", {{"phase", std::string("fault:slow-link")}}, "<=", 150, 200.0, CheckStatus::kFail,
       "train/step_time p50 = 200 ms > 150 (100% | \"<worse>\" & more)\nsecond line"},
  };

  Comparison cmp;
  cmp.baseline_run = "20231231T000000Z-golden";
  cmp.baseline_started_at = "2023-12-31T00:00:00Z";
  auto compared = [](const std::string& name, const std::string& unit, const std::string& phase, double base, double cur,
                     const std::string& status, const std::string& reason) {
    MetricComparison c;
    c.name = name;
    c.unit = unit;
    c.better = name == "train/throughput" ? chaosbench::common::Better::kHigher : chaosbench::common::Better::kLower;
    c.labels = {{"phase", phase}};
    c.stat = "p50";
    c.n_baseline = status == "warn" ? 3 : 30;
    c.n_current = 30;
    c.baseline = base;
    c.current = cur;
    c.change = (cur - base) / base;
    c.ci_low = c.change - 0.02;
    c.ci_high = c.change + 0.02;
    c.p_value = status == "fail" ? 0.001 : 0.2;
    c.status = parse_gate_status(status);
    c.reason = reason;
    return c;
  };
  cmp.metrics = {
      compared("train/throughput", "samples/s", "overall", 780, 769.2, "pass", "within tolerance"),
      compared("train/step_time", "ms", "overall", 100, 130, "fail", "p50 +30.0% [+28.0%, +32.0%], p = 0.001"),
      compared("train/step_time", "ms", "baseline", 100, 101, "warn", "3 baseline samples (< 8)"),
  };
  cmp.verdict = GateStatus::kFail;
  run.comparison = cmp;
  return run;
}

RunResult aborted_run() {
  RunResult run = stamped_run("serve-abort", R"({"name":"serve-abort","cluster":{"nodes":2},"workload":{"kind":"serve"},)"
                                             R"("abort":{"when":["error-rate"],"for":"3s"}})");
  run.duration_s = 9.5;
  run.verdict = Verdict::kAborted;
  run.reason = "aborted by error-rate: infer/error_rate mean 41% over 3s > max 5%";
  run.phases = {{"baseline", 0, 4}, {"fault:lossy", 4, 9.12}};
  FaultRecord loss;
  loss.name = "lossy";
  loss.type = "network.loss";
  loss.targets = {"node0", "node1"};
  loss.applied_at_s = 4;
  loss.reverted_at_s = 9.12;
  loss.backend = "netem";
  run.faults = {loss};
  run.metrics = {metric("infer/error_rate", "%", "baseline", 0), metric("infer/error_rate", "%", "fault:lossy", 38),
                 metric("infer/error_rate", "%", "overall", 21), metric("probe/failures", "count", "overall", 4, {{"probe", std::string("error-rate")}}),
                 metric("probe/failures", "count", "overall", 0, {{"probe", std::string("health")}}),
                 metric("fault/abort_latency", "ms", "overall", 120)};
  ProbeRecord error_rate{"error-rate", "metric", "continuous", 9, 4, {}};
  error_rate.transitions = {{1.0, true, 0.0, "infer/error_rate mean 0% over 3s <= max 5%"},
                            {6.0, false, 12.5, "infer/error_rate mean 12.5% over 3s > max 5% <&>"}};
  ProbeRecord health{"health", "http", "continuous", 9, 0, {{1.0, true, std::nullopt, "GET /health: 200"}}};
  run.probes = {error_rate, health};
  run.abort = AbortRecord{"error-rate", "infer/error_rate mean 41% over 3s > max 5% <&>", 9.0, 9.12};
  run.events = {event(9.0, -1, "abort", {{"cause", std::string("error-rate")}})};
  run.checks = {{"infer/error_rate", {{"phase", std::string("overall")}}, "<=", 50, 21.0, CheckStatus::kPass,
                 "infer/error_rate value = 21 %"}};
  return run;
}

RunResult clean_train_run() {
  RunResult run;
  run.scenario_name = "clean";
  set_scenario(run, R"({"name":"clean","cluster":{"nodes":4},"workload":{"kind":"train","bucket_size":"4MiB",)"
                      R"("model":{"layers":[256,1024,16]},"checkpoint":{"every_steps":50},"recovery":{"mode":"elastic"}}})");
  run.duration_s = 60;
  run.verdict = Verdict::kPass;
  run.phases = {{"baseline", 0, 20}, {"fault:slow-link", 20, 40}, {"recovery:slow-link", 40, 60}};
  run.faults = {slow_link("node3", 20, 40)};
  run.metrics = {
      metric("train/step_time", "ms", "baseline", 100, {}, true),
      metric("train/comm_time", "ms", "baseline", 10, {}, true),
      metric("train/overlap", "%", "baseline", 80),
      metric("train/rank_imbalance", "%", "baseline", 4),
      metric("train/straggler_score", "ratio", "baseline", 1.0, {{"rank", std::int64_t{0}}}),
      metric("train/straggler_score", "ratio", "baseline", 0.96, {{"rank", std::int64_t{1}}}),
      metric("resilience/throughput_retention", "ratio", "fault:slow-link", 0.9),
      metric("resilience/time_to_recover", "s", "overall", 1.5, {{"fault", std::string("slow-link")}, {"occurrence", std::int64_t{1}}}),
      metric("resilience/badput", "%", "overall", 1.0, {{"bucket", std::string("checkpoint_save")}}),
      metric("resilience/badput", "%", "overall", 2.0, {{"bucket", std::string("recovery")}}),
      metric("resilience/badput", "%", "overall", 0.5, {{"bucket", std::string("wasted_progress")}}),
      metric("ckpt/save_time", "ms", "overall", 12, {}, true),
  };
  return run;
}

namespace {

// Fault i of many_faults_run: its name, type and how much it slows a step down.
struct FaultKind {
  const char* name;
  const char* type;
  double slow;
};
constexpr FaultKind kFaultKinds[] = {
    {"slow-link", "network.delay", 1.8}, {"cpu-throttle", "node.cpu_throttle", 1.4}, {"node-kill", "node.kill", 1.15}};

// Every phase's training records, the step time `slow` times the baseline's.
void phase_records(RunResult& run, const std::string& phase, double slow) {
  run.metrics.push_back(metric("train/throughput", "samples/s", phase, 5120 / slow, {}, true));
  run.metrics.push_back(metric("train/step_time", "ms", phase, 50 * slow, {}, true));
  run.metrics.push_back(metric("train/compute_time", "ms", phase, 38 * std::min(slow, 1.4), {}, true));
  run.metrics.push_back(metric("train/comm_time", "ms", phase, 12 * slow, {}, true));
  run.metrics.push_back(metric("train/overlap", "%", phase, 62 / slow));
  run.metrics.push_back(metric("train/mfu", "%", phase, 31.5 / slow));
  run.metrics.push_back(metric("train/rank_imbalance", "%", phase, 3 * slow * slow));
  for (std::int64_t rank = 0; rank < 4; ++rank)
    run.metrics.push_back(metric("train/straggler_score", "ratio", phase, rank == 2 ? 0.97 / slow : 1.0, {{"rank", rank}}));
  run.metrics.push_back(metric("train/loss", "", phase, 0.8 / slow));
  run.metrics.push_back(metric("ckpt/save_time", "ms", phase, 21 * slow, {}, true));
}

// The per-fault records of occurrence `f` (1-based) of kind `kind`.
void fault_records(RunResult& run, const FaultRecord& f, const FaultKind& kind) {
  const Labels own{{"fault", f.name}, {"occurrence", std::int64_t{1}}};
  run.metrics.push_back(metric("resilience/throughput_retention", "ratio", "fault:" + f.name, 1 / kind.slow));
  run.metrics.push_back(metric("fault/apply_latency", "us", "overall", f.apply_latency_us.value_or(0), own));
  if (kind.type == std::string("network.delay")) run.metrics.push_back(metric("fault/effect_error", "%", "overall", 2.4, own));
  if (kind.type != std::string("node.kill")) return;
  run.metrics.push_back(metric("resilience/time_to_detect", "s", "overall", 0.031, own));
  run.metrics.push_back(metric("resilience/time_to_recover", "s", "overall", 1.62, own));
  run.metrics.push_back(metric("resilience/lost_steps", "steps", "overall", 7, own));
}

}  // namespace

RunResult many_faults_run(int faults) {
  RunResult run = stamped_run("many-faults", R"({"name":"many-faults","cluster":{"nodes":4},"workload":{"kind":"train"}})");
  run.duration_s = 10.0 + 10.0 * faults;
  run.verdict = Verdict::kPass;
  run.phases = {{"baseline", 0, 10}};
  phase_records(run, "baseline", 1.0);
  for (int i = 0; i < faults; ++i) {
    const FaultKind& kind = kFaultKinds[i % std::size(kFaultKinds)];
    const double at = 10.0 + 10.0 * i;
    FaultRecord f;
    f.name = fmt::format("{}-{}", kind.name, i + 1);
    f.type = kind.type;
    f.targets = {fmt::format("node{}", i % 4)};
    f.applied_at_s = at;
    f.reverted_at_s = at + 5;
    f.backend = kind.type == std::string("network.delay") ? "nfqueue" : "cgroup";
    f.apply_latency_us = 900 + 37.0 * i;
    run.faults.push_back(f);
    run.phases.push_back({"fault:" + f.name, at, at + 5});
    run.phases.push_back({"recovery:" + f.name, at + 5, at + 10});
    phase_records(run, "fault:" + f.name, kind.slow);
    phase_records(run, "recovery:" + f.name, 1.02);
    fault_records(run, f, kind);
  }
  phase_records(run, "overall", 1.2);
  run.metrics.push_back(metric("resilience/goodput", "%", "overall", 88));
  run.metrics.push_back(metric("resilience/restarts", "count", "overall", faults / 3));
  for (int rank = 0; rank < 4; ++rank) {
    std::vector<double> t, v;
    for (int k = 0; k <= 20 * (faults + 1); ++k) {
      t.push_back(k * 0.5);
      const auto window = static_cast<std::size_t>(k / 20);
      const bool in_fault = k >= 20 && k % 20 < 10;
      v.push_back(50 * (in_fault ? kFaultKinds[(window - 1) % std::size(kFaultKinds)].slow : 1.0) + rank);
    }
    run.series.push_back(series("train/step_time", "ms", rank, t, v));
  }
  run.checks = {{"train/throughput", {{"phase", std::string("baseline")}}, ">=", 4000, 5120.0, CheckStatus::kPass,
                 "train/throughput value = 5120 samples/s"}};
  return run;
}

MetricComparison gated_row(const MetricRecord& m, const std::string& basis, double change, GateStatus status) {
  MetricComparison c;
  c.name = m.name;
  c.unit = m.unit;
  c.better = m.better;
  c.labels = m.labels;
  c.stat = m.stats ? "p50" : "value";
  c.basis = m.stats ? basis : "samples";
  c.baseline = m.value;
  c.current = m.value * (1 + change);
  c.change = change;
  c.status = status;
  c.reason = status == GateStatus::kFail ? "regression beyond the tolerance" : "p50 within tolerance";
  if (!m.stats) {
    c.n_baseline = c.n_current = 1;
    c.baseline_points = {c.baseline};
    c.current_points = {c.current};
    c.reason = "a single value on each side";
    return c;
  }
  c.ci_low = change - 0.05;
  c.ci_high = change + 0.05;
  c.p_value = status == GateStatus::kFail ? 0.0004 : 0.42;
  const bool runs = basis == "runs";
  for (int i = 0; i < (runs ? 5 : 21); ++i) {
    const double spread = runs ? 1 + 0.03 * std::sin(i * 1.7) : 0.7 + 0.03 * i;
    c.baseline_points.push_back(c.baseline * spread);
    c.current_points.push_back(c.current * (runs ? 1 + 0.03 * std::sin(i * 2.3 + 1) : spread));
  }
  c.n_baseline = runs ? 5 : 4000;
  c.n_current = runs ? 5 : 4100;
  return c;
}

namespace {

// A row of `stat` over the overall phase of 1 MiB messages with these points and
// statistics, n per side the number of points; the reason says the status.
MetricComparison plotted_row(const std::string& name, const std::string& unit, const std::string& better,
                             const std::string& stat, const std::string& basis, std::vector<double> base,
                             std::vector<double> cur, double baseline, double current, GateStatus status) {
  MetricComparison c;
  c.name = name;
  c.unit = unit;
  c.better = chaosbench::common::parse_better(better);
  c.labels = {{"phase", std::string("overall")}, {"bytes", std::int64_t{1 << 20}}};
  c.stat = stat;
  c.basis = basis;
  c.n_baseline = base.size();
  c.n_current = cur.size();
  c.baseline_points = std::move(base);
  c.current_points = std::move(cur);
  c.baseline = baseline;
  c.current = current;
  c.change = current / baseline - 1;
  c.status = status;
  c.reason = status == GateStatus::kFail ? "regression" : "no significant change";
  return c;
}

}  // namespace

std::vector<MetricComparison> gated_rows() {
  std::vector<MetricComparison> rows;
  rows.push_back(plotted_row("comm/busbw", "GB/s", "higher", "value", "runs", {4.1, 4.0, 4.2, 4.05, 4.15},
                             {4.12, 4.02, 4.18, 4.1, 4.16}, 4.1, 4.115, GateStatus::kPass));
  rows.back().p_value = 0.8;
  MetricRecord throughput{"train/throughput", "samples/s", chaosbench::common::Better::kHigher, {{"phase", std::string("overall")}}, 5120, {}};
  rows.push_back(gated_row(throughput, "samples", -0.0625, GateStatus::kWarn));
  std::vector<double> base, cur;  // 21 quantiles a side
  for (int i = 0; i <= 20; ++i) {
    base.push_back(100 + 10 * i);
    cur.push_back(130 + 10 * i);
  }
  rows.push_back(plotted_row("comm/latency", "us", "lower", "p99", "samples", base, cur, 290, 320, GateStatus::kFail));
  rows.back().n_baseline = 4000;
  rows.back().n_current = 4100;
  rows.push_back(plotted_row("train/step_time", "ms", "lower", "p50", "runs", {10, 10.2, 9.9, 10.1, 9.8},
                             {12, 12.3, 11.8, 12.1, 12.2}, 10, 12.08, GateStatus::kFail));
  for (auto* failed : {&rows[2], &rows[3]}) {
    failed->ci_low = 0.06;
    failed->ci_high = 0.15;
    failed->p_value = 0.002;
  }
  return rows;
}

RunResult combined_run() {
  auto run = from_json(read_file(source("tests/data/train-results.json")));
  run.series.clear();
  run.events.clear();
  run.processes.clear();
  run.probes.clear();
  run.repeat = RepeatRecord{3, false, {}};
  for (int i = 1; i <= 3; ++i)
    run.repeat->runs.push_back({fmt::format("train-{}", i), fmt::format("run-0{}", i), i == 2 ? Verdict::kFail : Verdict::kPass,
                                i == 2 ? "check train/throughput failed" : "", "2026-11-30T00:00:00Z", 9.5 + i});
  Comparison cmp;
  cmp.baseline_run = "base-combined";
  cmp.verdict = GateStatus::kFail;
  for (const auto& m : run.metrics) {
    const bool slow = m.name == "train/step_time" && label_value(m.labels, "phase") == "overall";
    auto c = gated_row(m, "runs", slow ? 0.18 : -0.01, slow ? GateStatus::kFail : GateStatus::kPass);
    if (!m.stats) {  // a derived single number: one figure per run too
      c.basis = "runs";
      c.baseline_points = {m.value * 0.98, m.value, m.value * 1.01};
      c.current_points = {m.value * 0.99, m.value * 0.97, m.value};
      c.n_baseline = c.n_current = 3;
      c.p_value = 0.5;
    }
    cmp.metrics.push_back(c);
  }
  run.comparison = cmp;
  return run;
}

void check_golden(const std::string& name, const std::string& actual) {
  std::string path = std::string(CHAOSBENCH_SOURCE_DIR) + "/tests/golden/" + name;
  if (const char* update = std::getenv("CHAOSBENCH_UPDATE_GOLDEN"); update && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
    WARN("rewrote " << path);
    return;
  }
  std::ifstream in(path, std::ios::binary);
  INFO("golden file " << path << " (CHAOSBENCH_UPDATE_GOLDEN=1 rewrites it)");
  REQUIRE(in.good());
  std::stringstream expected;
  expected << in.rdbuf();
  CHECK(actual == expected.str());
}

}  // namespace chaosbench::test

#include "reports/goodput/goodput_run_inputs.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <set>
#include <stdexcept>
#include <utility>

#include "common/values/percentile.h"
#include "reports/model/text_format.h"

namespace chaosbench::reports {
namespace {

using P = GoodputInputs::Provenance;
using Value = GoodputInputs::Value;

// The kinds of fault that stop a training job: a soak of one of them is the run's
// failure process.
constexpr const char* kFailureTypes[] = {"node.kill",  "rank.kill",        "process.signal",  "gpu.xid",
                                         "gpu.hang",   "collective.error", "collective.hang", "gpu.oom"};

using Wanted = std::vector<std::pair<const char*, std::string>>;

// A record named `name` whose labels hold every wanted pair and, unless `extra_ok`, no
// other label.
const MetricRecord* find_record(const RunResult& run, const std::string& name, const Wanted& wanted,
                                bool extra_ok = false) {
  for (const auto& r : run.metrics) {
    if (r.name != name) continue;
    if (!extra_ok && r.labels.size() != wanted.size()) continue;
    if (std::all_of(wanted.begin(), wanted.end(),
                    [&](const auto& w) { return label_value(r.labels, w.first) == w.second; }))
      return &r;
  }
  return nullptr;
}

double seconds_in(double value, const std::string& unit) {
  if (unit == "ms") return value / 1e3;
  if (unit == "us") return value / 1e6;
  if (unit == "ns") return value / 1e9;
  if (unit == "min") return value * 60;
  return value;  // "s"
}

// The record's p50 when it has stats, else its value, in seconds.
double median_seconds(const MetricRecord& r) { return seconds_in(r.stats ? r.stats->p50 : r.value, r.unit); }

Value measured(double v, std::string source) { return {v, P::kMeasured, std::move(source)}; }

// The step time: the mean productive step (resilience/goodput x duration_s / steps) when
// the run finished its steps, since that is the work its goodput counts and a soak's
// baseline is short (its first failure may come seconds in, before the steps settle);
// else the baseline's p50.
void read_step_time(const RunResult& run, GoodputInputs& in) {
  const auto* goodput = find_record(run, "resilience/goodput", {{"phase", "overall"}});
  // Finished: passed, or failed only its checks (not stopped, not out of time).
  const bool finished = run.verdict == Verdict::kPass ||
                        (run.verdict == Verdict::kFail && !run.abort && run.reason.find("timeout") == std::string::npos);
  if (goodput && finished && in.run_steps && *in.run_steps > 0 && goodput->value > 0 && run.duration_s > 0) {
    in.step_time_s = measured(goodput->value / 100 * run.duration_s / *in.run_steps,
                              "mean productive step: resilience/goodput x duration_s / workload.steps");
  } else if (const auto* r = find_record(run, "train/step_time", {{"phase", "baseline"}})) {
    in.step_time_s = measured(median_seconds(*r), "train/step_time{phase=baseline} p50");
  } else if (const auto* o = find_record(run, "train/step_time", {{"phase", "overall"}})) {
    in.step_time_s = measured(median_seconds(*o), "train/step_time{phase=overall} p50 (no baseline phase)");
    in.notes.push_back("no fault-free step time (train/step_time{phase=baseline}): the overall p50 stands in");
  } else {
    in.notes.push_back("no train/step_time record: the step time is assumed");
  }
}

void read_checkpoints(const RunResult& run, GoodputInputs& in) {
  const auto& f = run.scenario_facts;
  if (f.checkpoint_every && *f.checkpoint_every > 0) {
    in.checkpoint_every_steps = *f.checkpoint_every;
  } else {
    in.notes.push_back("the scenario saves no checkpoints: the checkpoint interval and cost are assumed");
    return;
  }
  if (const auto* r = find_record(run, "ckpt/save_time", {{"phase", "overall"}}))
    in.checkpoint_cost_s = measured(median_seconds(*r), "ckpt/save_time{phase=overall} p50");
  else
    in.notes.push_back("no ckpt/save_time{phase=overall} record: the checkpoint cost is assumed");
}

// The median of the values; 0 for none.
double median_of(std::vector<double> v) { return v.empty() ? 0 : common::median(std::move(v)); }

double median_part(const std::vector<GoodputInputs::FailureCost>& failures, double GoodputInputs::FailureCost::*part) {
  std::vector<double> v;
  for (const auto& f : failures) v.push_back(f.*part);
  return median_of(v);
}

// "median of 4 failures", "the 1 failure".
std::string median_of_text(std::size_t n) {
  return n == 1 ? "the 1 failure" : fmt::format("median of {} failures", n);
}

// The parts of a failure's cost: resilience/time_lost's `part` label, the median input
// and the per-failure field. A part a run does not report (rejoin, outside elastic
// recovery) stays at its default, 0.
struct CostPart {
  const char* name;
  Value GoodputInputs::*median;
  double GoodputInputs::FailureCost::*of_failure;
};
constexpr CostPart kCostParts[] = {
    {"detect", &GoodputInputs::detect_s, &GoodputInputs::FailureCost::detect_s},
    {"restart", &GoodputInputs::restart_s, &GoodputInputs::FailureCost::restart_s},
    {"restore", &GoodputInputs::restore_s, &GoodputInputs::FailureCost::restore_s},
    {"recompute", &GoodputInputs::recompute_s, &GoodputInputs::FailureCost::recompute_s},
    {"rejoin", &GoodputInputs::rejoin_s, &GoodputInputs::FailureCost::rejoin_s}};

// resilience/time_lost: one record per failure and part (labels fault, occurrence, part),
// and one median per part (labels part only; computed from the failures when absent).
void read_time_lost(const RunResult& run, GoodputInputs& in) {
  std::map<std::pair<std::string, std::string>, GoodputInputs::FailureCost> failures;  // by fault, occurrence
  std::set<std::string> reported;  // the parts some failure has
  for (const auto& r : run.metrics) {
    if (r.name != "resilience/time_lost" || label_value(r.labels, "phase") != "overall") continue;
    const auto fault = label_value(r.labels, "fault"), part = label_value(r.labels, "part");
    if (fault.empty()) continue;
    auto& cost = failures[{fault, label_value(r.labels, "occurrence")}];
    for (const auto& p : kCostParts)
      if (part == p.name) cost.*p.of_failure = seconds_in(r.value, r.unit);
    reported.insert(part);
  }
  for (const auto& [key, cost] : failures) in.measured_failures.push_back(cost);
  const auto n = in.measured_failures.size();
  for (const auto& p : kCostParts) {
    if (const auto* r = find_record(run, "resilience/time_lost", {{"phase", "overall"}, {"part", p.name}}))
      in.*p.median = measured(seconds_in(r->value, r->unit),
                              fmt::format("resilience/time_lost{{part={}}}: {}", p.name, median_of_text(n)));
    else if (reported.contains(p.name))
      in.*p.median = measured(median_part(in.measured_failures, p.of_failure),
                              fmt::format("resilience/time_lost{{part={}}}: {} (computed)", p.name, median_of_text(n)));
  }
}

// A results file from before resilience/time_lost: per failure (labels fault, occurrence)
// time_to_detect, time_to_recover (from the fault to steps again, so restart = recover -
// detect - restore, with the run's restore p50) and lost_steps (x step time: recompute).
void read_older_costs(const RunResult& run, GoodputInputs& in) {
  std::map<std::pair<std::string, std::string>, std::pair<double, double>> detect_recover;
  std::map<std::pair<std::string, std::string>, double> lost_steps;
  for (const auto& r : run.metrics) {
    const std::pair key{label_value(r.labels, "fault"), label_value(r.labels, "occurrence")};
    if (key.first.empty() || label_value(r.labels, "phase") != "overall") continue;
    if (r.name == "resilience/time_to_detect") detect_recover[key].first = seconds_in(r.value, r.unit);
    else if (r.name == "resilience/time_to_recover") detect_recover[key].second = seconds_in(r.value, r.unit);
    else if (r.name == "resilience/lost_steps") lost_steps[key] = r.value;
  }
  if (detect_recover.empty()) {
    in.notes.push_back("no per-failure costs (resilience/time_lost, time_to_detect, time_to_recover): they are assumed");
    return;
  }
  double restore = 0;
  if (const auto* r = find_record(run, "ckpt/restore_time", {{"phase", "overall"}})) restore = median_seconds(*r);
  for (const auto& [key, dr] : detect_recover) {
    GoodputInputs::FailureCost c;
    c.detect_s = dr.first;
    c.restore_s = std::clamp(restore, 0.0, std::max(0.0, dr.second - dr.first));
    c.restart_s = std::max(0.0, dr.second - dr.first - c.restore_s);
    c.recompute_s = lost_steps.contains(key) ? lost_steps[key] * in.step_time_s.value : 0;
    in.measured_failures.push_back(c);
  }
  const auto n = in.measured_failures.size();
  auto median = [&](double GoodputInputs::FailureCost::*part) { return median_part(in.measured_failures, part); };
  const std::string older = median_of_text(n) + ", no resilience/time_lost";
  in.detect_s = measured(median(&GoodputInputs::FailureCost::detect_s), "resilience/time_to_detect: " + older);
  in.restore_s = measured(median(&GoodputInputs::FailureCost::restore_s), "ckpt/restore_time p50: " + older);
  in.restart_s = measured(median(&GoodputInputs::FailureCost::restart_s),
                          "resilience/time_to_recover - detect - restore: " + older);
  in.recompute_s = measured(median(&GoodputInputs::FailureCost::recompute_s),
                            "resilience/lost_steps x step time: " + older);
  in.notes.push_back("this run has no resilience/time_lost records: each failure's costs come from "
                     "time_to_detect, time_to_recover, ckpt/restore_time and lost_steps");
}

void read_recovery(const RunResult& run, GoodputInputs& in) {
  const auto& mode = run.scenario_facts.recovery_mode;
  if (mode == "restart") {
    in.lost_work = GoodputInputs::LostWork::kCheckpoint;
    in.lost_work_source = {0, P::kScenario, "workload.recovery.mode restart"};
  } else if (mode == "elastic") {
    in.lost_work = GoodputInputs::LostWork::kMemory;
    in.lost_work_source = {0, P::kScenario, "workload.recovery.mode elastic"};
  } else {
    in.unrecoverable = fmt::format("the run's workload.recovery.mode is {}: a failure ends its job, so it has no "
                                   "goodput under failures (--mode checkpoint|memory models one that recovers)",
                                   mode.empty() ? "none" : mode);
  }
}

void read_soak(const RunResult& run, GoodputInputs& in) {
  for (const auto& f : run.scenario_facts.arrival_faults) {
    if (std::find(std::begin(kFailureTypes), std::end(kFailureTypes), f.type) == std::end(kFailureTypes)) continue;
    if (in.run_failures) {
      in.notes.push_back(fmt::format("the scenario's fault {} also arrives at random: only {} is modelled", f.name,
                                     in.run_failures->fault));
      continue;
    }
    if (!(f.probability > 0)) {
      in.notes.push_back(fmt::format("the scenario's fault {} never fires (probability 0): not modelled", f.name));
      continue;
    }
    GoodputInputs::RunFailures r;
    r.fault = f.name;
    r.type = f.type;
    r.process = f.process == "weibull" ? GoodputInputs::Process::kWeibull : GoodputInputs::Process::kPoisson;
    r.mtbf_s = f.mtbf_s;
    r.shape = r.process == GoodputInputs::Process::kWeibull ? f.shape : 1;
    r.offset_s = f.at_s.value_or(0);
    r.dead_time_s = f.duration_s.value_or(0);
    r.max_occurrences = f.max_occurrences;
    r.probability = f.probability;
    in.run_failures = r;
  }
  if (!in.run_failures)
    in.notes.push_back("the scenario has no failure with random arrivals (a soak): no prediction for the run itself");
}

void read_outcome(const RunResult& run, GoodputInputs& in) {
  if (const auto* r = find_record(run, "resilience/goodput", {{"phase", "overall"}})) in.measured_goodput_pct = r->value;
  if (const auto* r = find_record(run, "resilience/ettr", {{"phase", "overall"}})) in.measured_ettr = r->value;
  if (const auto* r = find_record(run, "resilience/mtti_observed", {{"phase", "overall"}}))
    in.measured_mtti_s = seconds_in(r->value, r->unit);
  // Taken apart from the saves' share once the interval is final (derive_checkpoint_interval).
  if (const auto* r = find_record(run, "resilience/running_efficiency", {{"phase", "overall"}});
      r && std::isfinite(r->value) && r->value > 0 && r->value <= 1)
    in.baseline_ettr = r->value;
  if (const auto* r = find_record(run, "resilience/badput", {{"phase", "overall"}, {"bucket", "startup"}}))
    in.startup_s = measured(r->value * run.duration_s / 100, "resilience/badput{bucket=startup} x duration_s");
  else
    in.notes.push_back("no resilience/badput{bucket=startup} record: the startup is assumed");
}

void derive_interval(GoodputInputs& in) {
  if (!in.checkpoint_every_steps || in.checkpoint_interval_s.provenance == P::kGiven) return;
  const auto& step = in.step_time_s;
  in.checkpoint_interval_s = {*in.checkpoint_every_steps * step.value, P::kScenario,
                              fmt::format("workload.checkpoint.every_steps {:g} x step time ({})",
                                          *in.checkpoint_every_steps, to_string(step.provenance))};
}

}  // namespace

std::vector<int> default_node_grid() {
  std::vector<int> grid;
  for (int decade = 1; decade <= 100'000; decade *= 10)
    for (int m : {1, 2, 5})
      if (decade * m <= 100'000) grid.push_back(decade * m);
  return grid;
}

GoodputInputs assumed_goodput_inputs() {
  GoodputInputs in;
  const char* a = "default (docs/goodput-model.md)";
  in.step_time_s = {10, P::kAssumed, a};
  in.checkpoint_interval_s = {3600, P::kAssumed, a};
  in.checkpoint_cost_s = {30, P::kAssumed, a};
  in.detect_s = {60, P::kAssumed, a};
  in.restart_s = {300, P::kAssumed, a};
  in.restore_s = {180, P::kAssumed, a};
  in.recompute_s = {0, P::kAssumed, a};
  in.rejoin_s = {0, P::kAssumed, a};
  in.startup_s = {0, P::kAssumed, a};
  in.lost_work_source = {0, P::kAssumed, a};
  const double gpu_days = kLlama3Days * kLlama3Gpus / kLlama3Interruptions;
  in.node_mtbf_s = {gpu_days / 8 * 86400, P::kAssumed,
                    fmt::format("Llama 3 405B (Meta 2024): 419 interruptions in 54 days on 16,384 GPUs = one per "
                                "GPU every {:.0f} days, per 8-GPU node every {:.0f} days",
                                gpu_days, gpu_days / 8)};
  in.weibull_shape = {1, P::kAssumed, "default: poisson"};
  in.gpus_per_node = {8, P::kAssumed, a};
  in.nodes = default_node_grid();
  return in;
}

void read_run_inputs(const RunResult& run, GoodputInputs& in) {
  const auto& f = run.scenario_facts;
  if (f.workload_kind != "train")
    throw std::invalid_argument(fmt::format("the run's workload is {}, not train: the goodput model needs a training job",
                                            f.workload_kind.empty() ? "not named" : "\"" + f.workload_kind + "\""));
  if (f.cluster_nodes) in.run_nodes = static_cast<int>(std::clamp(*f.cluster_nodes, 0.0, 2e9));
  in.run_steps = f.steps.value_or(400);
  if (!f.steps) in.notes.push_back("the scenario names no workload.steps: the train default, 400");
  read_step_time(run, in);
  read_checkpoints(run, in);
  read_time_lost(run, in);
  if (in.measured_failures.empty() && in.detect_s.provenance != P::kMeasured) read_older_costs(run, in);
  read_recovery(run, in);
  read_soak(run, in);
  read_outcome(run, in);
}

void derive_checkpoint_interval(GoodputInputs& in) {
  derive_interval(in);
  if (!in.baseline_ettr) return;
  // The saves' share of fault-free running is the model's own (C per interval).
  const double tau = in.checkpoint_interval_s.value, c = in.checkpoint_cost_s.value;
  const double saves = in.checkpoint_every_steps && tau > 0 ? tau / (tau + c) : 1.0;
  in.running_efficiency = measured(std::min(1.0, *in.baseline_ettr / saves),
                                   "resilience/running_efficiency, checkpoint saves taken out");
}

}  // namespace chaosbench::reports

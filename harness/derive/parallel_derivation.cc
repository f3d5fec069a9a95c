#include "harness/derive/parallel_derivation.h"

#include <algorithm>
#include <map>
#include <utility>

#include "harness/derive/aggregator.h"

namespace chaosbench::harness {
namespace {

using StageGroupKey = std::pair<std::int64_t, std::int64_t>;  // pp_stage, tp_group

// A group's time is its slowest member's median stage_ms. A TP group moves at its slowest
// shard's pace (every layer's allreduce waits for it) and a stage's replicas meet in the
// gradient allreduce, so the slowest member sets the pace; a median over the members
// would hide one slow shard of two (the median of two is their mean: half its delay).
struct GroupTimes {
  std::map<StageGroupKey, double> groups;       // each TP group's time
  std::map<std::int64_t, double> stages;  // each stage's: its slowest group's
};

GroupTimes group_times(const std::vector<const StepEvent*>& steps) {
  std::map<StageGroupKey, std::map<int, std::vector<double>>> members;
  for (const auto* s : steps)
    if (s->parallel && s->stage_ms)
      members[{s->parallel->pp_stage, s->parallel->tp_group()}][s->rank].push_back(*s->stage_ms);
  GroupTimes out;
  for (const auto& [key, ranks] : members) {
    double slowest = 0;
    for (const auto& [rank, v] : ranks) slowest = std::max(slowest, compute_stats(v).p50);
    out.groups[key] = slowest;
    double& stage = out.stages[key.first];
    stage = std::max(stage, slowest);
  }
  return out;
}

reports::Labels stage_labels(const std::string& phase, std::int64_t stage) {
  return {{"phase", phase}, {"pp_stage", stage}};
}

reports::Labels group_labels(const std::string& phase, const StageGroupKey& key) {
  return {{"phase", phase}, {"pp_stage", key.first}, {"tp_group", key.second}};
}

// fastest ÷ each of `times` (those above 0), at least 2 to compare.
template <typename Key>
std::map<Key, double> scores(const std::map<Key, double>& times) {
  std::map<Key, double> out;
  if (times.size() < 2) return out;
  double fastest = times.begin()->second;
  for (const auto& [key, t] : times) fastest = std::min(fastest, t);
  for (const auto& [key, t] : times)
    if (t > 0) out[key] = fastest / t;
  return out;
}

void stage_records(const std::string& phase, const GroupTimes& times, std::vector<reports::MetricRecord>& out) {
  for (const auto& [stage, t] : times.stages)
    out.push_back(catalogue_record("train/stage_time", stage_labels(phase, stage), t));
  for (const auto& [stage, score] : scores(times.stages))
    out.push_back(catalogue_record("train/straggler_score", stage_labels(phase, stage), score));
}

// TP groups are compared only with the groups of their own stage: different stages do
// different work by design, and stage_records already compares those.
void tp_group_records(const std::string& phase, const GroupTimes& times, std::vector<reports::MetricRecord>& out) {
  std::map<std::int64_t, std::map<StageGroupKey, double>> by_stage;
  for (const auto& [key, t] : times.groups) by_stage[key.first][key] = t;
  for (const auto& [stage, groups] : by_stage) {
    if (groups.size() < 2) continue;
    for (const auto& [key, t] : groups)
      out.push_back(catalogue_record("train/stage_time", group_labels(phase, key), t));
    for (const auto& [key, score] : scores(groups))
      out.push_back(catalogue_record("train/straggler_score", group_labels(phase, key), score));
  }
}

// A stage's bubble: the median over its ranks' steps, each the share of that step's
// pipeline phase the rank waited (a step with a checkpoint or a fault does not move it).
void bubble_records(const std::string& phase, const std::vector<const StepEvent*>& steps,
                    std::vector<reports::MetricRecord>& out) {
  std::map<std::int64_t, std::vector<double>> by_stage;
  for (const auto* s : steps)
    if (s->parallel && s->parallel->pp >= 2 && s->bubble_pct) by_stage[s->parallel->pp_stage].push_back(*s->bubble_pct);
  for (const auto& [stage, values] : by_stage) {
    auto stats = compute_stats(values);
    out.push_back(catalogue_record("train/pipeline_bubble", stage_labels(phase, stage), stats.p50, stats));
  }
}

}  // namespace

void derive_parallel_records(const std::string& phase, const std::vector<const StepEvent*>& steps,
                             std::vector<reports::MetricRecord>& out) {
  const auto times = group_times(steps);
  stage_records(phase, times, out);
  tp_group_records(phase, times, out);
  bubble_records(phase, steps, out);
}

}  // namespace chaosbench::harness

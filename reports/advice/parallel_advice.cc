#include "reports/advice/parallel_advice.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <initializer_list>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/values/units.h"
#include "reports/advice/advice_lookup.h"
#include "reports/model/text_format.h"

namespace chaosbench::reports {
namespace {

using Context = AdviceRule::Context;
using Finding = AdviceRule::Finding;

// --- where the ranks sat ---------------------------------------------------------------

struct Coords {
  std::int64_t tp_rank = 0, pp_stage = 0, dp_rank = 0;
};

// Each rank's coordinates, from the labels of its series: a hybrid rank labels its
// per-step samples with them, and a series keeps the rank beside them.
struct Placement {
  std::map<int, Coords> ranks;
  std::int64_t tp = 1, dp = 1;

  std::int64_t tp_group(const Coords& c) const { return c.dp_rank + dp * c.pp_stage; }
};

Placement placement_of(const RunResult& run) {
  Placement p;
  for (const auto& s : run.series) {
    auto rank = label_number(s.labels, "rank");
    auto tp = label_number(s.labels, "tp_rank"), pp = label_number(s.labels, "pp_stage");
    auto dp = label_number(s.labels, "dp_rank");
    if (!rank || !tp || !pp || !dp) continue;
    // Coordinates as a hybrid rank sends them: whole numbers well inside an int.
    constexpr double kMax = 1 << 20;
    const auto sane = [&](double v) { return std::isfinite(v) && v >= 0 && v < kMax; };
    if (!sane(*rank) || !sane(*tp) || !sane(*pp) || !sane(*dp)) continue;
    Coords c{std::llround(*tp), std::llround(*pp), std::llround(*dp)};
    p.ranks[static_cast<int>(*rank)] = c;
    p.tp = std::max(p.tp, c.tp_rank + 1);
    p.dp = std::max(p.dp, c.dp_rank + 1);
  }
  return p;
}

// The nodes the ranks that `pick` accepts ran on, sorted ("" when none is known).
template <typename Pick>
std::string nodes_of(const RunResult& run, const Placement& placement, Pick pick) {
  std::set<std::string> nodes;
  for (const auto& proc : run.processes) {
    auto it = placement.ranks.find(proc.rank);
    if (it != placement.ranks.end() && !proc.node.empty() && pick(it->second)) nodes.insert(proc.node);
  }
  std::string out;
  for (const auto& n : nodes) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// --- the per-group records ---------------------------------------------------------------

// The phase's records of `name` whose labels, less phase, have exactly `keys`.
std::vector<const MetricRecord*> records_with(const RunResult& run, std::string_view name, std::string_view phase,
                                              std::initializer_list<std::string_view> keys) {
  std::vector<const MetricRecord*> out;
  for (const auto& m : run.metrics) {
    if (m.name != name || label_value(m.labels, "phase") != phase) continue;
    auto labels = without_phase(m.labels);
    bool exact = labels.size() == keys.size();
    for (auto key : keys) exact = exact && labels.contains(std::string(key));
    if (exact) out.push_back(&m);
  }
  return out;
}

// The lowest straggler score with exactly `keys` below `threshold`, in any phase but
// overall (a fault window's straggler is named there; overall mixes the windows).
const MetricRecord* lowest_score(const RunResult& run, std::initializer_list<std::string_view> keys, double threshold) {
  const MetricRecord* worst = nullptr;
  for (const auto& p : run.phases)
    for (const auto* m : records_with(run, "train/straggler_score", p.name, keys))
      if (m->value < threshold && (!worst || m->value < worst->value)) worst = m;
  return worst;
}

const MetricRecord* with_label(const std::vector<const MetricRecord*>& records, const char* key, const std::string& value) {
  for (const auto* m : records)
    if (label_value(m->labels, key) == value) return m;
  return nullptr;
}

const MetricRecord* fastest(const std::vector<const MetricRecord*>& records) {
  const MetricRecord* best = nullptr;
  for (const auto* m : records)
    if (m->value > 0 && (!best || m->value < best->value)) best = m;
  return best;
}

// "; baseline 0.97 ratio" when the score is from another phase and the baseline has one.
std::string baseline_score(const RunResult& run, const MetricRecord& score, std::initializer_list<std::string_view> keys) {
  std::string phase = label_value(score.labels, "phase");
  if (phase == "baseline") return "";
  for (const auto* m : records_with(run, "train/straggler_score", "baseline", keys))
    if (without_phase(m->labels) == without_phase(score.labels))
      return fmt::format("; baseline {}", format_value(m->value, "ratio"));
  return "";
}

std::string fault_window_detail(const RunResult& run, const std::string& phase, const std::string& what) {
  const auto* fault = fault_of_phase(run, phase);
  if (!fault) return "";
  return fmt::format("In this window the slowdown is what fault {} injected; judge {} by how fast the job gets back to its baseline.",
                     describe_fault(*fault), what);
}

// Whether the stage's other TP groups keep up with the fastest stage, so that one group
// (a node) is the cause rather than the layers the stage holds.
bool one_group_slow(const RunResult& run, const std::string& phase, const std::string& stage, const MetricRecord* fastest_stage,
                    double threshold) {
  std::vector<const MetricRecord*> groups;
  for (const auto* m : records_with(run, "train/stage_time", phase, {"pp_stage", "tp_group"}))
    if (label_value(m->labels, "pp_stage") == stage) groups.push_back(m);
  const auto* best = fastest(groups);
  return best && fastest_stage && fastest_stage->value / best->value >= threshold;
}

// The smallest m ≥ `needed` that divides `replica_batch` (the trainer splits a replica's
// batch into equal microbatches), or `needed` when none does or the batch is unknown.
double valid_microbatches(double needed, std::optional<double> replica_batch) {
  if (!replica_batch || *replica_batch < needed || std::floor(*replica_batch) != *replica_batch) return needed;
  for (double m = needed; m <= *replica_batch; ++m)
    if (std::fmod(*replica_batch, m) == 0) return m;
  return needed;
}

}  // namespace

std::optional<Finding> slow_pipeline_stage(const Context& c, const AdviceRule& rule) {
  const auto* worst = lowest_score(c.run, {"pp_stage"}, rule.threshold);
  if (!worst) return std::nullopt;
  const std::string phase = label_value(worst->labels, "phase"), stage = label_value(worst->labels, "pp_stage");
  const auto times = records_with(c.run, "train/stage_time", phase, {"pp_stage"});
  const auto* own = with_label(times, "pp_stage", stage);
  const auto* best = fastest(times);
  Finding f;
  f.evidence = fmt::format("stage {} in {}: train/straggler_score {} (the fastest stage's time ÷ its own{})", stage, phase,
                           format_value(worst->value, "ratio"), baseline_score(c.run, *worst, {"pp_stage"}));
  if (own && best)
    f.evidence += fmt::format("; train/stage_time {} against {} on stage {}, the fastest", format_value(own->value, "ms"),
                              format_value(best->value, "ms"), label_value(best->labels, "pp_stage"));
  const auto placement = placement_of(c.run);
  const std::string nodes = nodes_of(c.run, placement, [&](const Coords& k) { return std::to_string(k.pp_stage) == stage; });
  if (!nodes.empty()) f.evidence += fmt::format("; its ranks run on {}", nodes);
  f.detail = fault_window_detail(c.run, phase, "stage " + stage);
  if (!f.detail.empty()) return f;
  if (one_group_slow(c.run, phase, stage, best, rule.threshold))
    f.detail = fmt::format("Only part of stage {} is slow: its fastest TP group keeps up with stage {}, so look at the slow "
                           "group's node (slow-tp-group), not at the layer split.",
                           stage, best ? label_value(best->labels, "pp_stage") : "");
  else
    f.detail = fmt::format("Move layers off stage {} (an uneven split, fewer layers on it), or check {} first: a slower "
                           "device or a busy node looks the same.",
                           stage, nodes.empty() ? "its nodes" : nodes);
  return f;
}

std::optional<Finding> slow_tp_group(const Context& c, const AdviceRule& rule) {
  const auto* worst = lowest_score(c.run, {"pp_stage", "tp_group"}, rule.threshold);
  if (!worst) return std::nullopt;
  const std::string phase = label_value(worst->labels, "phase"), stage = label_value(worst->labels, "pp_stage");
  const std::string group = label_value(worst->labels, "tp_group");
  std::vector<const MetricRecord*> times;
  for (const auto* m : records_with(c.run, "train/stage_time", phase, {"pp_stage", "tp_group"}))
    if (label_value(m->labels, "pp_stage") == stage) times.push_back(m);
  const auto* own = with_label(times, "tp_group", group);
  const auto* best = fastest(times);
  Finding f;
  f.evidence = fmt::format("TP group {} (stage {}) in {}: train/straggler_score {} (the fastest TP group of its stage ÷ its own{})",
                           group, stage, phase, format_value(worst->value, "ratio"),
                           baseline_score(c.run, *worst, {"pp_stage", "tp_group"}));
  if (own && best)
    f.evidence += fmt::format("; train/stage_time {} against {} of TP group {}", format_value(own->value, "ms"),
                              format_value(best->value, "ms"), label_value(best->labels, "tp_group"));
  const auto placement = placement_of(c.run);
  const std::string nodes =
      nodes_of(c.run, placement, [&](const Coords& k) { return std::to_string(placement.tp_group(k)) == group; });
  if (!nodes.empty()) f.evidence += fmt::format("; its ranks run on {}", nodes);
  f.detail = fault_window_detail(c.run, phase, "TP group " + group);
  if (f.detail.empty())
    f.detail = fmt::format("Check {} first (device clocks, thermal limits, a busy neighbour): the group's shards do equal "
                           "work, so one slow rank is the node's doing.",
                           nodes.empty() ? "the group's node" : nodes);
  return f;
}

std::optional<Finding> pipeline_bubble(const Context& c, const AdviceRule& rule) {
  const std::string phase = tuning_phase(c.run, "train/pipeline_bubble");
  const auto stages = records_with(c.run, "train/pipeline_bubble", phase, {"pp_stage"});
  if (stages.size() < 2) return std::nullopt;
  double sum = 0, lo = stages.front()->value, hi = lo;
  for (const auto* m : stages) {
    sum += m->value;
    lo = std::min(lo, m->value);
    hi = std::max(hi, m->value);
  }
  const double measured = sum / double(stages.size()), p = double(stages.size());
  if (measured <= rule.threshold) return std::nullopt;
  Finding f;
  f.evidence = fmt::format("train/pipeline_bubble {} in {}, the mean over {} stages ({} to {})", format_value(measured, "%"),
                           phase, stages.size(), format_value(lo, "%"), format_value(hi, "%"));
  // (p − 1)/(m + p − 1) < 10 % from m = 9(p − 1) + 1.
  const double needed = 9 * (p - 1) + 1;
  const auto m = c.scenario.microbatches;
  std::optional<double> analytic;
  if (m && *m >= 1) {
    analytic = (p - 1) / (*m + p - 1);
    f.evidence += fmt::format("; pp {}, {} microbatches: analytic bubble (p − 1)/(m + p − 1) = {}", p, *m, pct(*analytic));
  }
  if (!m || *m < needed) {
    std::optional<double> replica;
    const auto placement = placement_of(c.run);
    if (c.scenario.batch_size) replica = *c.scenario.batch_size / double(placement.dp);
    const double target = valid_microbatches(needed, replica);
    f.detail = fmt::format("With {} microbatches per step the analytic bubble is {} (it falls under 10 % from m = {}{}); "
                           "1F1B holds at most p microbatches' activations per stage, GPipe all m.",
                           target, pct((p - 1) / (target + p - 1)), needed,
                           target != needed ? fmt::format("; {} is the first that divides the replica's {} samples", target, *replica)
                                            : "");
  }
  if (analytic && measured - *analytic * 100 > rule.secondary)
    f.detail += fmt::format("{}The measured bubble is {} points above the analytic: the stages are unequal "
                            "(train/straggler_score per pp_stage), which more microbatches do not fix.",
                            f.detail.empty() ? "" : " ", format_value(measured - *analytic * 100, ""));
  return f;
}

std::optional<Finding> tp_communication(const Context& c, const AdviceRule& rule) {
  const std::string phase = tuning_phase(c.run, "comm/time");
  const auto* tp = find_record(c.run, "comm/time", phase, {{"group", std::string("tp")}});
  const auto* step = find_record(c.run, "train/step_time", phase);
  if (!tp || !step || !(p50(*step) > 0)) return std::nullopt;
  const double share = p50(*tp) / p50(*step);
  if (share <= rule.threshold) return std::nullopt;
  Finding f;
  f.evidence = fmt::format("TP communication is {} of step time in {} (comm/time{{group=tp}} p50 {} of train/step_time p50 {})",
                           pct(share), phase, format_value(p50(*tp), "ms"), format_value(p50(*step), "ms"));
  for (const char* group : {"pp", "dp"})
    if (const auto* other = find_record(c.run, "comm/time", phase, {{"group", std::string(group)}}))
      f.evidence += fmt::format("; {} p50 {}", group, format_value(p50(*other), "ms"));
  if (const auto* bytes = find_record(c.run, "comm/bytes", phase, {{"group", std::string("tp")}}))
    f.evidence += fmt::format("; {} per rank and step in TP allreduces (comm/bytes)", format_bytes(bytes->value));
  const auto placement = placement_of(c.run);
  if (placement.tp >= 2)
    f.detail = fmt::format("tp is {}: try tp {} (and twice the pp or dp for the same world), so each allreduce spans fewer "
                           "ranks and each shard is bigger.",
                           placement.tp, placement.tp / 2);
  std::map<std::int64_t, std::set<std::string>> group_nodes;
  for (const auto& proc : c.run.processes)
    if (auto it = placement.ranks.find(proc.rank); it != placement.ranks.end() && !proc.node.empty())
      group_nodes[placement.tp_group(it->second)].insert(proc.node);
  int spanning = 0;
  std::int64_t example = -1;
  for (const auto& [group, nodes] : group_nodes)
    if (nodes.size() > 1 && spanning++ == 0) example = group;
  if (spanning > 0)
    f.detail += fmt::format("{}{} of {} TP groups span nodes (TP group {}: {}): keep each TP group on one node (NVLink, or the "
                            "node's own link); with Megatron's rank order that takes ranks per node a multiple of tp.",
                            f.detail.empty() ? "" : " ", spanning, group_nodes.size(), example,
                            nodes_of(c.run, placement, [&](const Coords& k) { return placement.tp_group(k) == example; }));
  else if (!group_nodes.empty())
    f.detail += fmt::format("{}Every TP group is on one node already.", f.detail.empty() ? "" : " ");
  return f;
}

}  // namespace chaosbench::reports

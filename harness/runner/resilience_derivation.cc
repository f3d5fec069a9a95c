#include "harness/runner/resilience_derivation.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "harness/runner/aggregator.h"
#include "harness/runner/gpu_fault_derivation.h"
#include "reports/text_format.h"

namespace chaosbench::harness {
namespace {

using RoundKey = std::pair<std::int64_t, std::int64_t>;  // attempt, generation

// The train_start events of one (attempt, generation): the ranks that resumed together.
struct RecoveryRound {
  RoundKey key;
  std::int64_t resumed_after = 0;  // the step it resumes after
  double last_start = 0;           // when the last of its ranks sent train_start
  std::optional<double> completed;  // every one of its W ranks has made a step since
};

// A fault occurrence during which some rank, or the harness, detected a failure.
struct Disruption {
  const reports::FaultRecord* fault = nullptr;
  double applied = 0;
  double detected = 0;
  std::optional<RecoveryRound> round;
};

// The round that the first train_start at or after `after` opens; nullopt without one.
std::optional<RecoveryRound> recovery_round(const TrainTimeline& tl, double after) {
  auto first = std::find_if(tl.starts.begin(), tl.starts.end(), [&](const auto& s) { return s.t >= after; });
  if (first == tl.starts.end()) return std::nullopt;
  RecoveryRound round{{first->attempt, first->generation}, first->step, first->t, std::nullopt};
  std::map<int, const StartEvent*> ranks;  // first train_start per rank
  for (auto it = first; it != tl.starts.end(); ++it)
    if (RoundKey{it->attempt, it->generation} == round.key) ranks.emplace(it->rank, &*it);
  for (const auto& [rank, start] : ranks) round.last_start = std::max(round.last_start, start->t);
  const auto world = static_cast<std::size_t>(std::max<std::int64_t>(first->world, 1));
  if (ranks.size() < world) return round;
  double done = 0;
  for (const auto& [rank, start] : ranks) {
    auto step = std::find_if(tl.steps.begin(), tl.steps.end(),
                             [&, r = rank, s = start](const auto& e) { return e.rank == r && e.t >= s->t; });
    if (step == tl.steps.end()) return round;
    done = std::max(done, step->t);
  }
  round.completed = done;
  return round;
}

std::vector<Disruption> find_disruptions(const TrainingInputs& in, const TrainTimeline& tl) {
  std::vector<double> applies;
  for (const auto& f : in.faults)
    if (f.applied_at_s) applies.push_back(*f.applied_at_s);
  std::sort(applies.begin(), applies.end());
  std::vector<Disruption> out;
  for (const auto& f : in.faults) {
    if (!f.applied_at_s) continue;
    const double applied = *f.applied_at_s;
    auto next = std::upper_bound(applies.begin(), applies.end(), applied);
    const double until = next == applies.end() ? in.end_s : *next;
    auto failure = std::find_if(tl.failures.begin(), tl.failures.end(),
                                [&](const auto& e) { return e.t >= applied && e.t < until; });
    if (failure == tl.failures.end()) continue;
    out.push_back({&f, applied, failure->t, recovery_round(tl, failure->t)});
  }
  return out;
}

reports::Labels occurrence_labels(const reports::FaultRecord& f) {
  return {{"phase", std::string("overall")},
          {"fault", f.name},
          {"occurrence", static_cast<std::int64_t>(f.occurrence)}};
}

void per_disruption_records(const TrainTimeline& tl, const std::vector<Disruption>& disruptions,
                            std::vector<reports::MetricRecord>& out) {
  for (const auto& d : disruptions) {
    const auto labels = occurrence_labels(*d.fault);
    out.push_back(catalogue_record("resilience/time_to_detect", labels, d.detected - d.applied));
    if (!d.round) continue;
    if (d.round->completed)
      out.push_back(catalogue_record("resilience/time_to_recover", labels, *d.round->completed - d.applied));
    std::int64_t before = 0;
    for (const auto& s : tl.steps)
      if (s.t < d.detected) before = std::max(before, s.step);
    const auto lost = std::max<std::int64_t>(0, before - d.round->resumed_after);
    out.push_back(catalogue_record("resilience/lost_steps", labels, static_cast<double>(lost)));
  }
}

void retention_records(const std::vector<reports::MetricRecord>& train, std::vector<reports::MetricRecord>& out) {
  auto baseline = std::find_if(train.begin(), train.end(), [](const auto& r) {
    return r.name == "train/throughput" && reports::label_value(r.labels, "phase") == "baseline";
  });
  if (baseline == train.end() || baseline->value <= 0) return;
  for (const auto& r : train) {
    if (r.name != "train/throughput" || !reports::label_value(r.labels, "phase").starts_with("fault:")) continue;
    out.push_back(catalogue_record("resilience/throughput_retention", r.labels, r.value / baseline->value));
  }
}

// Step durations (ms): each computation of a step number is one (attempt, generation,
// n), where n counts a rank's earlier reports of the same step in that (attempt,
// generation): a trainer that sends neither field (an outside program restarted from
// scratch) still has its recomputed steps told apart, by time. The last computation of a
// step is productive, earlier ones were wasted. A computation lasts the median of its
// ranks' step_ms.
std::pair<double, double> productive_and_wasted_ms(const TrainTimeline& tl) {
  struct Computation {
    double t = 0;
    std::vector<double> step_ms;
  };
  using ComputationKey = std::tuple<std::int64_t, std::int64_t, int>;  // attempt, generation, n
  std::map<std::int64_t, std::map<ComputationKey, Computation>> by_step;
  std::map<std::tuple<int, std::int64_t, std::int64_t, std::int64_t>, int> reports;  // rank, step, attempt, generation
  for (const auto& s : tl.steps) {  // in time order
    const int n = reports[{s.rank, s.step, s.attempt, s.generation}]++;
    auto& c = by_step[s.step][{s.attempt, s.generation, n}];
    c.t = std::max(c.t, s.t);
    if (s.step_ms) c.step_ms.push_back(*s.step_ms);
  }
  double productive = 0, wasted = 0;
  for (const auto& [step, computations] : by_step) {
    auto last = std::max_element(computations.begin(), computations.end(),
                                 [](const auto& a, const auto& b) { return a.second.t < b.second.t; });
    for (auto it = computations.begin(); it != computations.end(); ++it) {
      const double ms = it->second.step_ms.empty() ? 0.0 : compute_stats(it->second.step_ms).p50;
      (it == last ? productive : wasted) += ms;
    }
  }
  return {productive, wasted};
}

// Blocking save time: the slowest rank per save. A rank's n-th save of a step is one
// save with every other rank's n-th save of that step.
double checkpoint_save_ms(const TrainTimeline& tl) {
  std::map<std::pair<int, std::int64_t>, int> seen;  // rank, step -> saves so far
  std::map<std::pair<std::int64_t, int>, double> saves;
  for (const auto& s : tl.saves) {
    const int nth = seen[{s.rank, s.step}]++;
    double& ms = saves[{s.step, nth}];
    ms = std::max(ms, s.ms);
  }
  double total = 0;
  for (const auto& [key, ms] : saves) total += ms;
  return total;
}

// Restore time per round: the slowest rank. A restore belongs to the round of its rank's
// next train_start.
std::map<RoundKey, double> restore_ms_by_round(const TrainTimeline& tl) {
  std::map<RoundKey, double> rounds;
  for (const auto& r : tl.restores) {
    auto start = std::find_if(tl.starts.begin(), tl.starts.end(),
                              [&](const auto& s) { return s.rank == r.rank && s.t >= r.t; });
    RoundKey key = start == tl.starts.end() ? RoundKey{-1, -1} : RoundKey{start->attempt, start->generation};
    double& ms = rounds[key];
    ms = std::max(ms, r.ms);
  }
  return rounds;
}

void goodput_records(const TrainingInputs& in, const TrainTimeline& tl, const std::vector<Disruption>& disruptions,
                     std::vector<reports::MetricRecord>& out) {
  const bool timed = std::any_of(tl.steps.begin(), tl.steps.end(), [](const auto& s) { return s.step_ms.has_value(); });
  if (!timed || in.end_s <= 0) return;
  const double wall = in.end_s;
  auto pct = [&](double seconds) { return 100.0 * seconds / wall; };
  const auto [productive_ms, wasted_ms] = productive_and_wasted_ms(tl);
  const double goodput = pct(productive_ms * 1e-3);
  out.push_back(catalogue_record("resilience/goodput", phase_labels("overall"), goodput));

  const auto restores = restore_ms_by_round(tl);
  double restore_ms = 0;
  for (const auto& [key, ms] : restores) restore_ms += ms;
  double stalled = 0, recovery = 0;
  for (const auto& d : disruptions) {
    stalled += d.detected - d.applied;
    if (!d.round) continue;
    auto restore = restores.find(d.round->key);
    const double round_restore = restore == restores.end() ? 0.0 : restore->second * 1e-3;
    recovery += std::max(0.0, d.round->last_start - d.detected - round_restore);
  }
  const std::vector<std::pair<const char*, double>> buckets = {
      {"startup", tl.starts.empty() ? 0.0 : pct(std::max(0.0, tl.starts.front().t))},
      {"checkpoint_save", pct(checkpoint_save_ms(tl) * 1e-3)},
      {"checkpoint_restore", pct(restore_ms * 1e-3)},
      {"wasted_progress", pct(wasted_ms * 1e-3)},
      {"stalled", pct(stalled)},
      {"recovery", pct(recovery)},
  };
  double accounted = goodput;
  for (const auto& [bucket, value] : buckets) {
    auto labels = phase_labels("overall");
    labels["bucket"] = std::string(bucket);
    out.push_back(catalogue_record("resilience/badput", std::move(labels), value));
    accounted += value;
  }
  auto labels = phase_labels("overall");
  labels["bucket"] = std::string("other");
  out.push_back(catalogue_record("resilience/badput", std::move(labels), std::max(0.0, 100.0 - accounted)));
}

}  // namespace

std::vector<reports::MetricRecord> derive_resilience_records(const TrainingInputs& in, const TrainTimeline& timeline,
                                                             const std::vector<reports::MetricRecord>& train_records) {
  std::vector<reports::MetricRecord> out;
  if (timeline.empty()) return out;
  const auto disruptions = find_disruptions(in, timeline);
  per_disruption_records(timeline, disruptions, out);
  retention_records(train_records, out);
  out.push_back(catalogue_record("resilience/restarts", phase_labels("overall"),
                                 static_cast<double>(timeline.restarts.size())));
  goodput_records(in, timeline, disruptions, out);
  gpu_fault_records(timeline, out);
  return out;
}

}  // namespace chaosbench::harness

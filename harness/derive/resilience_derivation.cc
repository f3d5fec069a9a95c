#include "harness/derive/resilience_derivation.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "harness/derive/aggregator.h"
#include "harness/derive/gpu_fault_derivation.h"
#include "harness/derive/running_efficiency.h"
#include "reports/model/text_format.h"

namespace chaosbench::harness {
namespace {

using RoundKey = std::pair<std::int64_t, std::int64_t>;  // attempt, generation

// The train_start events of one (attempt, generation): the ranks that resumed together.
struct RecoveryRound {
  RoundKey key;
  std::int64_t resumed_after = 0;  // the step it resumes after
  double first_start = 0;          // when the first of its ranks sent train_start
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
  RecoveryRound round{{first->attempt, first->generation}, first->step, first->t, first->t, std::nullopt};
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
  // In time order: the faults come grouped by fault, not by time.
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.applied < b.applied; });
  return out;
}

reports::Labels occurrence_labels(const reports::FaultRecord& f) {
  return {{"phase", std::string("overall")},
          {"fault", f.name},
          {"occurrence", static_cast<std::int64_t>(f.occurrence)}};
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

// The fault-free step time (s): the median step_ms before the first disruption (all steps
// when there are none before it).
double clean_step_s(const TrainTimeline& tl, const std::vector<Disruption>& disruptions) {
  const double first = disruptions.empty() ? 1e300 : disruptions.front().applied;
  std::vector<double> before, all;
  for (const auto& s : tl.steps) {
    if (!s.step_ms) continue;
    all.push_back(*s.step_ms);
    if (s.t < first) before.push_back(*s.step_ms);
  }
  const auto& use = before.empty() ? all : before;
  return use.empty() ? 0.0 : compute_stats(use).p50 * 1e-3;
}

// When the disruption after `d` began (none: +inf).
double next_applied(const std::vector<Disruption>& disruptions, const Disruption& d) {
  double next = 1e300;
  for (const auto& other : disruptions)
    if (other.applied > d.applied) next = std::min(next, other.applied);
  return next;
}

// Elastic recovery: the ended ranks come back later and the job forms once more to admit
// them, without a failure. The time that costs: from the last step before that round to
// its first complete step, less one step. Nullopt without such a round before `until`.
std::optional<double> rejoin_s(const TrainTimeline& tl, const Disruption& d, double until, double step_s) {
  if (!d.round || !d.round->completed) return std::nullopt;
  auto next = recovery_round(tl, d.round->last_start + 1e-9);
  if (!next || next->key == d.round->key || next->first_start >= until || !next->completed) return std::nullopt;
  double last_step = d.round->first_start;
  for (const auto& s : tl.steps)
    if (s.t < next->first_start) last_step = std::max(last_step, s.t);
  return std::max(0.0, *next->completed - last_step - step_s);
}

// Per failure: detect and recover times, lost steps, and the time lost broken into
// detect (applied -> noticed), restart (noticed -> the recovery round's first complete
// step began, less its restore), restore (the round's slowest restore) and recompute (lost
// steps x the fault-free step time, plus the part of the step in flight at the fault),
// and rejoin where ended ranks came back into an
// elastic job (rejoin_s); then each part's median over the failures.
void per_disruption_records(const TrainTimeline& tl, const std::vector<Disruption>& disruptions,
                            const std::map<RoundKey, double>& restores, std::vector<reports::MetricRecord>& out) {
  const double step_s = clean_step_s(tl, disruptions);
  std::map<std::string, std::vector<double>> parts;
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
    auto restore = restores.find(d.round->key);
    const double restore_s = restore == restores.end() ? 0.0 : restore->second * 1e-3;
    // The job steps again when the round's first complete step began; the step that was
    // in flight when the fault hit is redone, like the lost steps.
    const double resumed = d.round->completed ? std::max(d.round->last_start, *d.round->completed - step_s)
                                              : d.round->last_start;
    double in_flight = 0;
    for (const auto& s : tl.steps)
      if (s.t < d.applied) in_flight = d.applied - s.t;  // steps are in time order: the last one wins
    std::vector<std::pair<std::string, double>> lost_time = {
        {"detect", d.detected - d.applied},
        {"restart", std::max(0.0, resumed - d.detected - restore_s)},
        {"restore", restore_s},
        {"recompute", static_cast<double>(lost) * step_s + std::min(in_flight, step_s)}};
    if (auto rejoin = rejoin_s(tl, d, next_applied(disruptions, d), step_s)) lost_time.emplace_back("rejoin", *rejoin);
    for (const auto& [part, seconds] : lost_time) {
      auto l = labels;
      l["part"] = part;
      out.push_back(catalogue_record("resilience/time_lost", std::move(l), seconds));
      parts[part].push_back(seconds);
    }
  }
  for (const auto& [part, values] : parts) {
    auto l = phase_labels("overall");
    l["part"] = part;
    out.push_back(catalogue_record("resilience/time_lost", std::move(l), compute_stats(values).p50));
  }
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
  // From the first rank's start: the job's own time, which a long job's start-up does not
  // weigh on (the goodput model's steady state).
  const double started = tl.starts.empty() ? 0.0 : std::max(0.0, tl.starts.front().t);
  std::vector<double> applied;
  for (const auto& f : in.faults)
    if (f.applied_at_s) applied.push_back(*f.applied_at_s);
  if (auto e = running_efficiency(tl, applied))
    out.push_back(catalogue_record("resilience/running_efficiency", phase_labels("overall"), *e));
  if (wall > started) {
    out.push_back(catalogue_record("resilience/ettr", phase_labels("overall"), productive_ms * 1e-3 / (wall - started)));
    if (!disruptions.empty())
      out.push_back(catalogue_record("resilience/mtti_observed", phase_labels("overall"),
                                     (wall - started) / static_cast<double>(disruptions.size())));
  }

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
  per_disruption_records(timeline, disruptions, restore_ms_by_round(timeline), out);
  retention_records(train_records, out);
  out.push_back(catalogue_record("resilience/restarts", phase_labels("overall"),
                                 static_cast<double>(timeline.restarts.size())));
  goodput_records(in, timeline, disruptions, out);
  gpu_fault_records(timeline, out);
  return out;
}

}  // namespace chaosbench::harness

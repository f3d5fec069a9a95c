#include "harness/derive/train_derivation.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "harness/derive/aggregator.h"
#include "harness/derive/parallel_derivation.h"
#include "harness/derive/resilience_derivation.h"

namespace chaosbench::harness {
namespace {

// One phase name's windows (a repeated fault has several), or "overall".
struct PhaseWindows {
  std::string name;
  std::vector<reports::Phase> windows;
  bool overall = false;  // [0, end_s], end included

  bool contains(double t) const {
    for (const auto& w : windows)
      if (t >= w.start_s && (t < w.end_s || (overall && t == w.end_s))) return true;
    return false;
  }
  double duration() const {
    double d = 0;
    for (const auto& w : windows) d += w.end_s - w.start_s;
    return d;
  }
};

std::vector<PhaseWindows> group_phases(const std::vector<reports::Phase>& phases, double end_s) {
  std::vector<PhaseWindows> out;
  for (const auto& p : phases) {
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& g) { return g.name == p.name; });
    if (it == out.end()) it = out.insert(out.end(), PhaseWindows{p.name, {}, false});
    it->windows.push_back(p);
  }
  out.push_back({"overall", {{"overall", 0.0, end_s}}, true});
  return out;
}

// Each rank's peak of one kind (the largest `name` sample it sent), TFLOP/s:
// compute/gemm_tflops (measured GEMM) or compute/peak_tflops (the hardware's).
std::map<int, double> rank_peaks(const std::vector<StoredSample>& samples, const char* name) {
  std::map<int, double> peaks;
  for (const auto& s : samples) {
    if (s.sample.name != name || s.sample.value <= 0) continue;
    double& p = peaks[s.sample.rank];
    p = std::max(p, s.sample.value);
  }
  return peaks;
}

// A data-parallel rank's steps all compare with each other: one stage.
constexpr std::int64_t kNoStage = -1;
std::int64_t stage_of(const StepEvent& s) { return s.parallel ? s.parallel->pp_stage : kNoStage; }

class PhaseDeriver {
 public:
  PhaseDeriver(const std::string& phase, std::vector<const StepEvent*> steps, std::vector<reports::MetricRecord>& out)
      : phase_(phase), steps_(std::move(steps)), out_(out) {}

  void parallel_groups() { derive_parallel_records(phase_, steps_, out_); }

  void throughput(double duration) {
    if (duration <= 0) return;
    double samples = 0;
    for (const auto* s : steps_) samples += s->samples.value_or(0);
    out_.push_back(catalogue_record("train/throughput", phase_labels(phase_), samples / duration));
  }

  void overlap() {
    double exposed = 0, total = 0;
    for (const auto* s : steps_) {
      if (!s->comm_ms || !s->comm_total_ms) continue;
      exposed += *s->comm_ms;
      total += *s->comm_total_ms;
    }
    if (total <= 0) return;
    const double pct = std::clamp(100.0 * (1.0 - exposed / total), 0.0, 100.0);
    out_.push_back(catalogue_record("train/overlap", phase_labels(phase_), pct));
  }

  // `metric` (train/mfu or train/mfu_hw) against each rank's peak of that kind.
  void mfu(const std::map<int, double>& peaks, const char* metric) {
    if (peaks.empty()) return;
    double max_peak = 0;
    for (const auto& [rank, p] : peaks) max_peak = std::max(max_peak, p);
    std::map<int, std::pair<double, double>> per_rank;  // flops, seconds
    for (const auto* s : steps_) {
      if (!s->flops || !s->step_ms) continue;
      auto& [flops, seconds] = per_rank[s->rank];
      flops += *s->flops;
      seconds += *s->step_ms * 1e-3;
    }
    std::vector<double> values;
    for (const auto& [rank, fs] : per_rank) {
      if (fs.second <= 0) continue;
      auto it = peaks.find(rank);
      const double peak = it != peaks.end() ? it->second : max_peak;
      values.push_back(fs.first / fs.second / (peak * 1e12) * 100.0);
    }
    if (values.empty()) return;
    auto stats = compute_stats(values);
    out_.push_back(catalogue_record(metric, phase_labels(phase_), stats.mean, stats));
  }

  // Compute time, not step time: the allreduce makes every rank's step equally long. A
  // hybrid job's stages differ by design (their layers, the loss on the last), so ranks
  // are compared within their pipeline stage and a step counts its worst stage.
  void rank_imbalance() {
    using StepKey = std::tuple<std::int64_t, std::int64_t, std::int64_t>;  // attempt, generation, step
    std::map<StepKey, std::map<std::int64_t, std::map<int, double>>> by_step;  // -> stage -> rank
    for (const auto* s : steps_)
      if (s->compute_ms) by_step[{s->attempt, s->generation, s->step}][stage_of(*s)][s->rank] = *s->compute_ms;
    std::vector<double> values;
    for (const auto& [key, stages] : by_step) {
      std::optional<double> worst;
      for (const auto& [stage, ranks] : stages) {
        if (ranks.size() < 2) continue;
        auto [lo, hi] = std::minmax_element(ranks.begin(), ranks.end(),
                                            [](const auto& a, const auto& b) { return a.second < b.second; });
        if (lo->second > 0) worst = std::max(worst.value_or(0.0), (hi->second - lo->second) / lo->second * 100.0);
      }
      if (worst) values.push_back(*worst);
    }
    if (values.empty()) return;
    auto stats = compute_stats(values);
    out_.push_back(catalogue_record("train/rank_imbalance", phase_labels(phase_), stats.p50, stats));
  }

  // Against the fastest rank of the same pipeline stage (all ranks of a data-parallel
  // job), for the reason rank_imbalance gives; a hybrid rank's record also names its stage.
  void straggler_score() {
    std::map<int, std::vector<double>> per_rank;
    std::map<int, const StepEvent*> last;  // a rank's stage is its latest step's
    for (const auto* s : steps_)
      if (s->compute_ms) {
        per_rank[s->rank].push_back(*s->compute_ms);
        last[s->rank] = s;
      }
    std::map<std::int64_t, std::map<int, double>> stages;  // stage -> rank -> median
    for (const auto& [rank, v] : per_rank) stages[stage_of(*last[rank])][rank] = compute_stats(v).p50;
    for (const auto& [stage, medians] : stages) {
      if (medians.size() < 2) continue;
      double fastest = medians.begin()->second;
      for (const auto& [rank, m] : medians) fastest = std::min(fastest, m);
      for (const auto& [rank, m] : medians) {
        if (m <= 0) continue;
        auto labels = phase_labels(phase_);
        labels["rank"] = static_cast<std::int64_t>(rank);
        if (stage != kNoStage) labels["pp_stage"] = stage;
        out_.push_back(catalogue_record("train/straggler_score", std::move(labels), fastest / m));
      }
    }
  }

  // Steps are in time order: the first reaching the target, the first and last losses.
  void loss_metrics(std::optional<double> target_loss) {
    const StepEvent* first = nullptr;
    const StepEvent* last = nullptr;
    bool reached = false;
    for (const auto* s : steps_) {
      if (!s->loss) continue;
      if (!first) first = s;
      last = s;
      if (target_loss && !reached && *s->loss <= *target_loss) {
        reached = true;
        out_.push_back(catalogue_record("train/time_to_target", phase_labels(phase_), s->t));
      }
    }
    if (first && *first->loss != 0)
      out_.push_back(catalogue_record("train/loss_ratio", phase_labels(phase_), *last->loss / *first->loss));
  }

 private:
  std::string phase_;
  std::vector<const StepEvent*> steps_;
  std::vector<reports::MetricRecord>& out_;
};

}  // namespace

std::vector<reports::MetricRecord> derive_train_records(const TrainingInputs& in, const TrainTimeline& timeline) {
  std::vector<reports::MetricRecord> out;
  const bool counts_samples =
      std::any_of(timeline.steps.begin(), timeline.steps.end(), [](const auto& s) { return s.samples.has_value(); });
  const auto peaks = rank_peaks(in.samples, "compute/gemm_tflops");
  const auto hardware_peaks = rank_peaks(in.samples, "compute/peak_tflops");
  for (const auto& phase : group_phases(in.phases, in.end_s)) {
    std::vector<const StepEvent*> steps;
    for (const auto& s : timeline.steps)
      if (phase.contains(s.t)) steps.push_back(&s);
    PhaseDeriver d(phase.name, std::move(steps), out);
    // A phase without steps still has a throughput (0) once the trainer counts samples:
    // a stalled fault window is what throughput_retention must show.
    if (counts_samples) d.throughput(phase.duration());
    d.overlap();
    d.mfu(peaks, "train/mfu");
    d.mfu(hardware_peaks, "train/mfu_hw");
    d.rank_imbalance();
    d.straggler_score();
    d.parallel_groups();
    if (phase.overall) d.loss_metrics(in.target_loss);
  }
  return out;
}

std::vector<reports::MetricRecord> derive_training_metrics(const TrainingInputs& in) {
  std::vector<reports::MetricRecord> out;
  const auto timeline = read_train_events(in.events, in.t0_wall);
  if (timeline.empty()) return out;
  const auto train = derive_train_records(in, timeline);
  out.insert(out.end(), train.begin(), train.end());
  for (auto& r : derive_resilience_records(in, timeline, train)) out.push_back(std::move(r));
  return out;
}

}  // namespace chaosbench::harness

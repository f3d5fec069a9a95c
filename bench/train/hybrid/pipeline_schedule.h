// The order in which a pipeline stage runs its microbatches' forward and backward passes,
// for the two schedules (GPipe and 1F1B), and the bubble they leave:
//   GPipe (Huang et al., 2019): every forward, then every backward; a stage holds the
//     activations of all `microbatches` at once.
//   1F1B (PipeDream-Flush, Narayanan et al., 2021; Megatron-LM's non-interleaved
//     schedule): stage s runs min(p − s − 1, m) warm-up forwards, then alternates one
//     forward and one backward, then drains the backwards; it holds at most p − s.
// Both leave the same bubble with equal stages: (p − 1) / (m + p − 1) of a step
// (Narayanan et al., SC'21, §2.2). simulate() plays a schedule out with given pass times
// and the pipeline's dependencies, which is what the measured bubble is checked against.
// Pure functions; no threads.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace chaosbench::bench::train {

enum class PipelineSchedule { kGpipe, kOneFOneB };
std::string_view to_string(PipelineSchedule s);  // "gpipe", "1f1b"
std::optional<PipelineSchedule> parse_pipeline_schedule(std::string_view text);

struct PipelineOp {
  bool forward = true;
  int microbatch = 0;
  bool operator==(const PipelineOp&) const = default;
};

// Stage `stage`'s passes, in order: each microbatch's forward once and its backward once,
// the forward first. Throws std::invalid_argument unless 0 <= stage < stages and
// microbatches >= 1.
std::vector<PipelineOp> stage_ops(PipelineSchedule schedule, int stage, int stages, int microbatches);

// (p − 1) / (m + p − 1): the share of a step each stage waits, with equal stages.
double analytic_bubble(int stages, int microbatches);

struct PipelineTimeline {
  double step_time = 0;           // the last pass's end: one optimizer step's pipeline time
  std::vector<double> busy;       // per stage: time spent in passes
  std::vector<int> peak_inflight; // per stage: microbatches whose activations are held at once
  // Per stage: 1 − busy / step_time, the share of the step it waited.
  double bubble(int stage) const;
};

// Plays the schedule out: a forward on stage s waits for the same microbatch's forward on
// stage s − 1; a backward on stage s waits for its backward on stage s + 1 (the last
// stage's, for its own forward); a stage runs its ops in stage_ops order, one at a time.
// `forward` and `backward` are per-stage pass times (one entry per stage).
PipelineTimeline simulate(PipelineSchedule schedule, int microbatches, const std::vector<double>& forward,
                          const std::vector<double>& backward);

}  // namespace chaosbench::bench::train

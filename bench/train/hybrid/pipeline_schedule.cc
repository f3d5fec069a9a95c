#include "bench/train/hybrid/pipeline_schedule.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace chaosbench::bench::train {

std::string_view to_string(PipelineSchedule s) { return s == PipelineSchedule::kGpipe ? "gpipe" : "1f1b"; }

std::optional<PipelineSchedule> parse_pipeline_schedule(std::string_view text) {
  if (text == "gpipe") return PipelineSchedule::kGpipe;
  if (text == "1f1b") return PipelineSchedule::kOneFOneB;
  return std::nullopt;
}

std::vector<PipelineOp> stage_ops(PipelineSchedule schedule, int stage, int stages, int microbatches) {
  if (stages < 1 || stage < 0 || stage >= stages || microbatches < 1)
    throw std::invalid_argument("a pipeline needs 0 <= stage < stages and at least one microbatch");
  std::vector<PipelineOp> ops;
  if (schedule == PipelineSchedule::kGpipe) {
    for (int i = 0; i < microbatches; ++i) ops.push_back({true, i});
    for (int i = 0; i < microbatches; ++i) ops.push_back({false, i});
    return ops;
  }
  const int warmup = std::min(stages - stage - 1, microbatches);
  int next_forward = 0, next_backward = 0;
  for (; next_forward < warmup; ++next_forward) ops.push_back({true, next_forward});
  while (next_forward < microbatches) {  // steady state: one forward, one backward
    ops.push_back({true, next_forward++});
    ops.push_back({false, next_backward++});
  }
  while (next_backward < microbatches) ops.push_back({false, next_backward++});  // cool-down
  return ops;
}

double analytic_bubble(int stages, int microbatches) {
  return static_cast<double>(stages - 1) / static_cast<double>(microbatches + stages - 1);
}

double PipelineTimeline::bubble(int stage) const {
  return step_time > 0 ? 1.0 - busy.at(static_cast<std::size_t>(stage)) / step_time : 0.0;
}

namespace {

// One stage's next op can start once its stage is free and its dependency has ended;
// every round starts, on some stage, the op whose dependency is met. A valid schedule
// never deadlocks; a round that starts nothing means one that would, and throws.
struct Player {
  int p;
  std::vector<std::vector<PipelineOp>> ops;
  std::vector<std::size_t> next;
  std::vector<double> free_at;
  std::vector<std::vector<double>> fwd_end, bwd_end;  // [stage][microbatch], < 0: not yet

  double ready(int s, const PipelineOp& op) const {
    const auto mb = static_cast<std::size_t>(op.microbatch);
    if (op.forward) return s == 0 ? 0.0 : fwd_end[static_cast<std::size_t>(s - 1)][mb];
    return s == p - 1 ? fwd_end[static_cast<std::size_t>(s)][mb] : bwd_end[static_cast<std::size_t>(s + 1)][mb];
  }
};

}  // namespace

PipelineTimeline simulate(PipelineSchedule schedule, int microbatches, const std::vector<double>& forward,
                          const std::vector<double>& backward) {
  const int p = static_cast<int>(forward.size());
  if (p < 1 || backward.size() != forward.size()) throw std::invalid_argument("one forward and backward time per stage");
  const auto P = static_cast<std::size_t>(p), M = static_cast<std::size_t>(microbatches);
  Player pl{p, {}, std::vector<std::size_t>(P, 0), std::vector<double>(P, 0.0),
            std::vector<std::vector<double>>(P, std::vector<double>(M, -1)),
            std::vector<std::vector<double>>(P, std::vector<double>(M, -1))};
  for (int s = 0; s < p; ++s) pl.ops.push_back(stage_ops(schedule, s, p, microbatches));
  PipelineTimeline t;
  t.busy.assign(P, 0.0);
  t.peak_inflight.assign(P, 0);
  std::vector<int> inflight(P, 0);
  for (std::size_t done = 0, total = P * 2 * M; done < total;) {
    bool progressed = false;
    for (std::size_t s = 0; s < P; ++s) {
      if (pl.next[s] == pl.ops[s].size()) continue;
      const PipelineOp& op = pl.ops[s][pl.next[s]];
      const double dep = pl.ready(static_cast<int>(s), op);
      if (dep < 0) continue;  // its dependency has not run yet
      const double start = std::max(pl.free_at[s], dep), length = op.forward ? forward[s] : backward[s];
      pl.free_at[s] = start + length;
      (op.forward ? pl.fwd_end : pl.bwd_end)[s][static_cast<std::size_t>(op.microbatch)] = pl.free_at[s];
      t.busy[s] += length;
      inflight[s] += op.forward ? 1 : -1;
      t.peak_inflight[s] = std::max(t.peak_inflight[s], inflight[s]);
      t.step_time = std::max(t.step_time, pl.free_at[s]);
      ++pl.next[s];
      ++done;
      progressed = true;
    }
    if (!progressed) throw std::logic_error("the pipeline schedule deadlocks");
  }
  return t;
}

}  // namespace chaosbench::bench::train

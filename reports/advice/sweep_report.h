// A sweep's points side by side, and the recommendation: the best point that passes its
// checks on the objective (train/time_to_target when the workload has a target loss,
// else train/throughput; comm/avg_busbw for the collective benchmark: the catalogue's
// sweep objectives, common/metrics/metric_display.h), with its margin over the runner-up and the confidence of that
// margin, from the gate's statistics on the per-step samples behind it (step time,
// latency): a margin inside the noise is said to be one. Pure.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/metrics/better.h"
#include "reports/model/run_model.h"

namespace chaosbench::reports {

struct SweepPointResult {
  std::string label;  // "bucket_size=1MiB batch_size=512"
  std::vector<std::string> overrides;
  std::string run_dir;
  RunResult result;
};

struct SweepSummary {
  std::string scenario;
  std::vector<SweepPointResult> points;
  std::string objective;  // metric name; empty when none applies
  common::Better better = common::Better::kUnknown;  // the objective's; kUnknown ("") when none applies
  std::optional<std::size_t> best;
  std::string recommendation;  // one paragraph with the numbers
};

SweepSummary summarize_sweep(std::string scenario, std::vector<SweepPointResult> points);
std::string render_sweep_markdown(const SweepSummary& sweep);  // sweep.md
std::string render_sweep_console(const SweepSummary& sweep);
std::string sweep_to_json(const SweepSummary& sweep);  // sweep.json: points, values, best, recommendation

}  // namespace chaosbench::reports

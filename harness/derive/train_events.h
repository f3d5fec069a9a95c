// The trainer's events (docs/metrics-protocol.md, "Events the harness understands") read
// into typed values with times relative to the workload's start, and the inputs the
// train/* and resilience/* derivations share. Pure over values; no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/derive/parallel_position.h"
#include "harness/collect/sample_store.h"
#include "reports/model/run_model.h"

namespace chaosbench::harness {

inline constexpr int kHarnessRank = -1;  // events the harness itself records

// `step`: one rank finished optimizer step `step` (1-based). Fields a trainer leaves out
// stay nullopt, and the metrics that need them are not derived.
struct StepEvent {
  int rank = 0;
  double t = 0;  // seconds since the workload started
  std::int64_t step = 0;
  std::optional<double> step_ms, compute_ms, comm_ms, comm_total_ms, samples, loss, flops;
  std::int64_t attempt = 0, generation = 0;
  // A hybrid-parallel rank's (all six coordinate fields, valid): where it sat, its stage's
  // forward + backward compute and the share of the pipeline phase it waited.
  std::optional<ParallelPosition> parallel;
  std::optional<double> stage_ms, bubble_pct;
};

// `train_start`: a rank is about to compute step + 1 (fresh, restored, recovered, rejoined).
struct StartEvent {
  int rank = 0;
  double t = 0;
  std::int64_t step = 0, world = 0, attempt = 0, generation = 0;
  std::string reason;
};

// `checkpoint_saved` (ms = blocking_ms) and `checkpoint_restored` (ms = ms).
struct CheckpointEvent {
  int rank = 0;
  double t = 0;
  std::int64_t step = 0;
  double ms = 0;
};

// `failure_detected` (a rank, or the harness with rank -1) and the harness's `restart`.
struct MarkEvent {
  int rank = 0;
  double t = 0;
};

// `fault_injected` {kind: gpu.bitflip} (what the emulation flipped, while computing
// `step`) and `sdc_detected` (replicas disagreed, found while computing `step`).
struct SdcEvent {
  int rank = 0;
  double t = 0;
  std::int64_t step = 0;
  std::string tensor;  // injections only
};

// Each list sorted by time (ties keep arrival order).
struct TrainTimeline {
  std::vector<StepEvent> steps;
  std::vector<StartEvent> starts;
  std::vector<CheckpointEvent> saves, restores;
  std::vector<MarkEvent> failures, restarts;  // restarts: harness (rank -1) events only
  std::vector<SdcEvent> bitflips, sdc_detections;
  struct XidEvent {
    int rank = 0;
    double t = 0;
    std::int64_t xid = 0, code = 0;
  };
  std::vector<XidEvent> xids;  // failure_detected with an Xid (a device error)

  bool empty() const { return steps.empty() && starts.empty(); }
};

// An event's time is the rank's `time`, or the receive time when it sent none (0).
TrainTimeline read_train_events(const std::vector<StoredEvent>& events, double t0_wall);

struct TrainingInputs {
  const std::vector<StoredEvent>& events;
  const std::vector<StoredSample>& samples;  // compute/gemm_tflops: each rank's measured peak
  double t0_wall = 0;                        // Unix seconds when the workload started
  double end_s = 0;                          // workload-relative end of the run
  const std::vector<reports::Phase>& phases;
  const std::vector<reports::FaultRecord>& faults;
  std::optional<double> target_loss;  // the scenario's target for train/time_to_target
};

// A record whose unit and better-direction come from the metric catalogue.
// The most ranks one `train_start` event says trained together, or `planned` (the
// scenario's world size) when no rank said so (none started).
std::int64_t trained_world(const std::vector<StoredEvent>& events, double t0_wall, std::int64_t planned);

reports::MetricRecord catalogue_record(const char* name, reports::Labels labels, double value,
                                       std::optional<reports::Stats> stats = std::nullopt);

reports::Labels phase_labels(const std::string& phase);

}  // namespace chaosbench::harness
